import type { OutputFormat, QueuePosition } from '../../contracts/search.js';
import type { JobStatusDoc } from '../../projections/jobStatus/jobStatus.js';
import { terminalStatuses } from '../../projections/jobStatus/jobStatus.js';
import type { SearchResultDoc } from '../../projections/searchResults/searchResults.js';
import { jsonBytes } from '../knownJson.js';
import { compatFailed, compatResult } from './compat.js';
import type { AnswerEncoding } from './encoding.js';
import { htmlLink, type LinkSettings } from './html.js';
import { nativeResult } from './native.js';
import { publicFailureDetail } from './publicFailure.js';

export interface RenderDeps extends LinkSettings {
  /** the result document behind a terminal job (a cached job reads its source's); undefined while not projected */
  resultOf(job: JobStatusDoc): SearchResultDoc | undefined;
  /** whether resultOf would find one: what an `html` answer needs to know, without reading the whole document */
  hasResult(job: JobStatusDoc): boolean;
  /**
   * A terminal job's json or compat answer rendered on another thread, with its ETag: the pipeline thread
   * (pipelineThread.ts), where the result was just projected and its text is still known. Undefined when that thread
   * has no result to render; the caller renders here then. With `encoding`, the answer compressed for the client
   * that asked comes too, made on that thread.
   */
  renderElsewhere?: (
    job: JobStatusDoc,
    output: 'json' | 'compat',
    options: { start?: number; baseUrl: string; encoding?: AnswerEncoding },
  ) => Promise<{ json: Buffer; etag: string; compressed?: { encoding: AnswerEncoding; bytes: Buffer } } | undefined>;
  /** where a job not yet ended stands in the fair scheduler (services/fairShare/queuePosition.ts) */
  queuePosition?: (jobId: string) => QueuePosition | undefined;
}

/**
 * A fetch's answer, whatever the surface: `body` goes through the route's response serializer, `json` is a result
 * already serialised (150 kB results are sent as they are, not validated and encoded again).
 */
export type Rendered = { status: 200 | 202; body: Record<string, unknown> } | { status: 200; json: string | Buffer };

const running = (deps: RenderDeps, job: JobStatusDoc): Rendered => {
  const queue = terminalStatuses.has(job.status) ? undefined : deps.queuePosition?.(job.jobId);
  return { status: 202, body: { job_id: job.jobId, status: 'running', ...(queue ? { queue } : {}) } };
};

/** Answers a fetch of `job` in `output`: 202 while running, 200 once terminal (docs/api.md#poll-and-read). */
export const renderJob = (
  deps: RenderDeps,
  job: JobStatusDoc,
  output: OutputFormat,
  options: { start?: number; baseUrl: string },
): Rendered => {
  if (!terminalStatuses.has(job.status)) return running(deps, job);
  if (job.status === 'failed') {
    const detail = publicFailureDetail(job);
    if (output === 'compat') return { status: 200, body: compatFailed(job, options, detail) };
    return { status: 200, body: { job_id: job.jobId, status: 'failed', detail } };
  }
  // Terminal in the log but its result not projected yet (read-your-writes fell back to the stream): still running
  // from the reader's side; the next poll has it. Expiry is decided by age alone, before rendering. The default
  // output (`html`, a link) only needs to know the result is there: polls of it never parse the result.
  if (output === 'html') {
    return deps.hasResult(job) ? { status: 200, body: htmlLink(deps, job, options.baseUrl) } : running(deps, job);
  }
  const doc = deps.resultOf(job);
  if (!doc) return running(deps, job);
  const native = nativeResult(job, doc, options.start);
  // the first answer of a result this process just made is written from its members' known text (knownJson.ts)
  return { status: 200, json: jsonBytes(output === 'compat' ? compatResult(native) : native) };
};
