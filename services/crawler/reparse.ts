import { createHash } from 'node:crypto';
import { type EventOf, streams } from '../../contracts/events.js';
import { ParsedSerp } from '../../contracts/result.js';
import { MAX_DEPTH, type SearchRequest } from '../../contracts/search.js';
import { fold } from '../../domain/kernel/decider.js';
import { DomainError, errorCodes } from '../../domain/kernel/errors.js';
import { type SearchJobEvent, searchJobDecider } from '../../domain/searchJob/searchJob.js';
import { PARSER_VERSION, type ParseOutcome, parseRaw } from '../../parser/index.js';
import { loadResult, putResult, resultBlobKey } from '../answers/resultBlobs.js';
import type { BlobStore } from '../ports/blobStore.js';
import type { CommandHandler } from '../ports/commandHandler.js';
import type { EventStore } from '../ports/eventStore.js';

/** Which jobs to re-parse: one job, or every crawled job completed at or after `since` (every one when neither). */
export interface ReparseSelection {
  jobId?: string;
  /** ISO instant compared with `CrawlCompleted.completedAt` */
  since?: string;
  /** re-parse even a job whose stored parser version is the current one */
  force?: boolean;
}

export type ReparseEntry =
  | { jobId: string; outcome: 'reparsed'; from: string; to: string; organic: { before: number; after: number } }
  | { jobId: string; outcome: 'skipped' | 'failed'; reason: string };

export interface ReparseReport {
  parserVersion: string;
  reparsed: number;
  skipped: number;
  failed: number;
  jobs: ReparseEntry[];
  /** global position of the last `SearchReparsed` appended: read models show every new result once there */
  position?: number;
}

/** The parser a re-parse runs; the current one unless a test swaps it. */
export interface Reparser {
  version: string;
  parseRaw(raw: string, context: { captureAio: boolean; device?: SearchRequest['device'] }): ParseOutcome;
}

const currentParser: Reparser = { version: PARSER_VERSION, parseRaw };

const sha256 = (buf: Buffer) => createHash('sha256').update(buf).digest('hex');

/** The crawler keeps Google's top MAX_DEPTH at most; a better parser must not make a stored result longer than that. */
const trim = (serp: ParsedSerp): ParsedSerp =>
  serp.organic_results.length <= MAX_DEPTH
    ? serp
    : { ...serp, organic_results: serp.organic_results.slice(0, MAX_DEPTH) };

/** Jobs with a `CrawlCompleted` at or after `since`, in log order; cache answers have none and are never listed. */
const completedJobs = async (eventStore: EventStore, since?: string) => {
  const after = since === undefined ? undefined : Date.parse(since);
  const ids = new Set<string>();
  for (let from = 0; ; ) {
    const batch = await eventStore.readAll({ fromPosition: from, maxCount: 1000 });
    if (batch.length === 0) return [...ids];
    from = batch[batch.length - 1].globalPosition;
    for (const e of batch) {
      if (e.type !== 'CrawlCompleted') continue;
      const data = e.data as EventOf<'CrawlCompleted'>['data'];
      if (after === undefined || Date.parse(data.completedAt) >= after) ids.add(data.jobId);
    }
  }
};

/**
 * `serp-api reparse`: the current parser over the raw HTML stored at crawl time, appended as `SearchReparsed`. No
 * page is fetched and no quota is touched. A job already parsed by the current version is skipped unless `force`;
 * a job whose raw HTML is gone, no longer matches its recorded hash, or no longer reads as results is reported as
 * failed and keeps the result it has. An unknown `jobId` throws (SERP_JOB_NOT_FOUND).
 */
export const reparseSearches = async (
  deps: {
    eventStore: EventStore;
    blobStore: BlobStore;
    handle: CommandHandler;
    parser?: Reparser;
    now?: () => Date;
    /** called after each job, for progress output */
    onJob?: (entry: ReparseEntry) => void;
  },
  selection: ReparseSelection,
): Promise<ReparseReport> => {
  const parser = deps.parser ?? currentParser;
  const now = () => (deps.now?.() ?? new Date()).toISOString();
  const report: ReparseReport = { parserVersion: parser.version, reparsed: 0, skipped: 0, failed: 0, jobs: [] };

  const one = async (jobId: string): Promise<ReparseEntry | undefined> => {
    const stream = streams.searchJob(jobId);
    const { events } = await deps.eventStore.readStream(stream);
    if (events.length === 0) return undefined;
    const history = events.map((e) => ({ type: e.type, data: e.data }) as SearchJobEvent);
    const state = fold(searchJobDecider, history);
    const skip = (reason: string): ReparseEntry => ({ jobId, outcome: 'skipped', reason });
    const fail = (reason: string): ReparseEntry => ({ jobId, outcome: 'failed', reason });
    if (state.sourceJobId) return skip(`answered from cache: its result is job ${state.sourceJobId}'s`);
    const completed = history.findLast((e): e is EventOf<'CrawlCompleted'> => e.type === 'CrawlCompleted');
    if (!completed || (state.status !== 'done' && state.status !== 'partial')) {
      return fail(`job is ${state.status}: it has no stored result to re-parse`);
    }
    const from = state.parserVersion ?? completed.data.parserVersion;
    if (from === parser.version && !selection.force) return skip(`already parsed by ${from}`);
    const latest = history.findLast(
      (e): e is EventOf<'CrawlCompleted'> | EventOf<'SearchReparsed'> =>
        e.type === 'CrawlCompleted' || e.type === 'SearchReparsed',
    );
    const ref = completed.data.rawHtmlRef;
    const raw = await deps.blobStore.get(ref.key);
    if (!raw) return fail(`raw HTML ${ref.key} is gone from the blob store (expired or deleted)`);
    if (sha256(raw) !== ref.sha256) return fail(`raw HTML ${ref.key} does not match the sha256 recorded at crawl time`);
    const parsed = parser.parseRaw(raw.toString('utf8'), {
      captureAio: state.request?.capture_aio ?? false,
      device: state.request?.device,
    });
    if (parsed.kind !== 'serp')
      return fail(`stored HTML no longer reads as results (${parsed.kind}: ${parsed.detail})`);
    // Checked here because the projector skips an event that fails its schema: the new result would never show.
    const checked = ParsedSerp.safeParse(trim(parsed.serp));
    if (!checked.success) return fail(`parser output breaks the result contract: ${checked.error.issues[0]?.message}`);
    const at = now();
    const resultRef = await putResult(deps.blobStore, resultBlobKey(jobId, at), checked.data);
    const res = await deps.handle(stream, searchJobDecider, {
      type: 'ReparseSearch',
      jobId,
      parserVersion: parser.version,
      resultRef,
      now: at,
    });
    if (res.events.length === 0) {
      await deps.blobStore.delete(resultRef.key).catch(() => undefined);
      return skip('nothing to re-parse');
    }
    const before = (latest ? ((await loadResult(deps.blobStore, latest.data)) as ParsedSerp | undefined) : undefined)
      ?.organic_results.length;
    if (res.position !== undefined) report.position = res.position;
    return {
      jobId,
      outcome: 'reparsed',
      from,
      to: parser.version,
      organic: { before: before ?? 0, after: checked.data.organic_results.length },
    };
  };

  const record = (entry: ReparseEntry) => {
    report.jobs.push(entry);
    report[entry.outcome] += 1;
    deps.onJob?.(entry);
  };

  const attempt = async (jobId: string) => {
    try {
      return await one(jobId);
    } catch (err) {
      return { jobId, outcome: 'failed', reason: err instanceof Error ? err.message : String(err) } as const;
    }
  };

  if (selection.jobId !== undefined) {
    const entry = await attempt(selection.jobId);
    if (!entry) throw new DomainError(errorCodes.jobNotFound, `job ${selection.jobId} not found`);
    record(entry);
    return report;
  }
  for (const jobId of await completedJobs(deps.eventStore, selection.since)) {
    const entry = await attempt(jobId);
    if (entry) record(entry);
  }
  return report;
};
