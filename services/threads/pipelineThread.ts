import type { DetectedLocation } from '../../contracts/result.js';
import type { SearchRequest } from '../../contracts/search.js';
import type { JobStatusDoc } from '../../projections/jobStatus/jobStatus.js';
import type { AnswerEncoding } from '../answers/encoding.js';
import type { RenderDeps } from '../answers/render.js';
import type { Config } from '../config/config.js';
import {
  CrawlAbortedError,
  CrawlBlockedError,
  CrawlRequestError,
  CrawlTransientError,
  type RequestErrorKind,
} from '../crawler/errors.js';
import type { ResolvedTargeting } from '../crawler/targeting.js';
import type { Judgement, LocationJudge } from '../geo/locationCheck.js';
import type { QueueStats } from '../ports/jobQueue.js';
import type { Projector } from '../projector/projector.js';
import { startThread, whenThreadEnds } from './boot.js';
import { createProjectedPosition } from './projectedPosition.js';
import { reportThreadFault, type ThreadKind } from './threadFaults.js';

/** A location resolved on the HTTP thread (the geotargets stay there), or why it could not be. */
export type TargetingResolution =
  | { ok: true; targeting: ResolvedTargeting }
  | { ok: false; message: string; kind: RequestErrorKind };

/**
 * A request's location resolved here, as it crosses to a thread that crawls: an unknown location is a resolution (the
 * crawl fails as a bad request there); any other error is thrown, so the crawl fails here and the queue retries it.
 */
export const resolutionOf = (
  resolveTargeting: (request: SearchRequest) => ResolvedTargeting,
  request: SearchRequest,
): TargetingResolution => {
  try {
    return { ok: true, targeting: resolveTargeting(request) };
  } catch (err) {
    if (err instanceof CrawlRequestError) return { ok: false, message: err.message, kind: err.kind };
    throw err;
  }
};

/**
 * The pipeline thread's side: each crawl's request → its location as the HTTP thread resolved it, and the crawler's
 * `resolveTargeting` that reads it back (no resolution: none was asked for, so no targeting).
 */
export const resolvedTargetings = () => {
  const resolved = new WeakMap<SearchRequest, TargetingResolution>();
  return {
    set: (request: SearchRequest, resolution: TargetingResolution) => void resolved.set(request, resolution),
    resolveTargeting: (request: SearchRequest): ResolvedTargeting => {
      const r = resolved.get(request);
      if (!r) return {};
      if (!r.ok) throw new CrawlRequestError(r.message, r.kind);
      return r.targeting;
    },
  };
};

/** An error as it crosses the thread boundary: the crawler's own classes keep their fields. */
export interface ThrownError {
  name: string;
  message: string;
  kind?: string;
  url?: string;
  status?: number;
}

export const toThrownError = (err: unknown): ThrownError => {
  const e = err as Partial<ThrownError> & { message?: string };
  return {
    name: e?.name ?? 'Error',
    message: e?.message ?? String(err),
    ...(typeof e?.kind === 'string' ? { kind: e.kind } : {}),
    ...(typeof e?.url === 'string' ? { url: e.url } : {}),
    ...(typeof e?.status === 'number' ? { status: e.status } : {}),
  };
};

/** the error the other thread threw, as the class the crawl worker (worker.ts) tells apart */
export const fromThrownError = (e: ThrownError): Error => {
  switch (e.name) {
    case 'CrawlAbortedError':
      return new CrawlAbortedError();
    case 'CrawlBlockedError':
      return new CrawlBlockedError(e.kind as CrawlBlockedError['kind'], e.url ?? '', e.status ?? 0);
    case 'CrawlTransientError':
      return new CrawlTransientError(e.kind as CrawlTransientError['kind'], e.url ?? '', e.message, e.status);
    case 'CrawlRequestError':
      return new CrawlRequestError(e.message, e.kind as RequestErrorKind, e.status);
    default:
      return new Error(e.message);
  }
};

/** What the pipeline thread is started with (structured-cloned). */
export interface PipelineThreadSetup {
  config: Config;
  /** whether its workers write log lines (the service's logger is on) */
  logger: boolean;
}

export type ToPipeline =
  | { type: 'appended'; position: number }
  | { type: 'resolved'; id: number; resolution: TargetingResolution }
  /** the location could not be resolved for another reason than being unknown: that crawl fails and is retried */
  | { type: 'resolved'; id: number; error: ThrownError }
  | { type: 'judged'; id: number; judgement: Judgement }
  /** the judge failed (never by design: the page is then taken unjudged, as if the page said nothing) */
  | { type: 'judged'; id: number; error: ThrownError }
  | {
      type: 'render';
      id: number;
      job: JobStatusDoc;
      output: 'json' | 'compat';
      start?: number;
      baseUrl: string;
      encoding?: AnswerEncoding;
    }
  | { type: 'queueStats'; id: number }
  /** the background workers' metrics (a scrape of /metrics) */
  | { type: 'metrics'; id: number }
  | { type: 'close' };

export type FromPipeline =
  | { type: 'ready'; position: number; warning?: string }
  | { type: 'failed'; error: ThrownError }
  | { type: 'appended'; position: number }
  | { type: 'projected'; position: number }
  | { type: 'resolve'; id: number; request: SearchRequest }
  /** where Google placed a page, judged against the request (docs/locations.md#the-check) */
  | { type: 'judge'; id: number; request: SearchRequest; location?: string; detected?: DetectedLocation }
  | {
      type: 'rendered';
      id: number;
      json?: Uint8Array;
      etag?: string;
      compressed?: { encoding: AnswerEncoding; bytes: Uint8Array };
    }
  | { type: 'queueStats'; id: number; stats: QueueStats }
  | { type: 'metrics'; id: number; text: string }
  /** a thread of this thread's (parse, hash, its event store's writer) failed and was started again: counted here */
  | { type: 'threadFault'; thread: ThreadKind; cause: string };

export interface PipelineThread {
  /** resolves once the thread's projector has caught up with the log and its crawl worker runs */
  ready: Promise<{ warning?: string }>;
  /** the thread's projector as seen from here: `waitFor` resolves when the thread says the position is projected */
  projector: Projector;
  queueStats(): Promise<QueueStats>;
  /** the thread's background workers' metrics, in Prometheus's text format */
  metricsText(): Promise<string>;
  renderElsewhere: NonNullable<RenderDeps['renderElsewhere']>;
  /** this thread's event store committed up to `position` (its onCommitted) */
  appended(position: number): void;
  /** stops the thread's workers, then its stores; resolves once it ended */
  close(): Promise<void>;
}

/**
 * The pipeline thread's heap ceiling. What it holds is the jobs in flight (each one's parsed pages until the merge,
 * ~0.5 MB a job) and each finished result until it is projected and first rendered. V8 derives a heap's growing
 * factor from its ceiling when SERP_HEAP_GROWING_PERCENT is 0 (the default with this thread): `test/bench/pipeline.ts`
 * at concurrency 32 peaked at 377–385 MB with this ceiling and one parse thread.
 */
export const PIPELINE_THREAD_LIMITS = { maxOldGenerationSizeMb: 256, maxYoungGenerationSizeMb: 16 };

/** how long `close()` waits for the thread to drain its workers and close its stores before stopping it */
const CLOSE_TIMEOUT_MS = 30_000;

/**
 * The write side of an embedded service on a thread of its own (`SERP_PIPELINE_THREAD=1`, docs/architecture.md): the
 * projector, the dispatcher, the job queue, the crawl worker and its crawler, and the retention sweeps. The thread
 * opens its own connections to the event log and the read models; the HTTP thread keeps only what answers requests
 * (reads, submits, key checks). What crosses between them is small: each side tells the other the position its event
 * store just committed, so that the other's subscriptions read the file at once; the thread tells the projected
 * position (read-your-writes waits: a revoked key, a retention sweep); the HTTP thread resolves locations (the
 * geotargets index stays in one heap); and the first answer of a finished result is rendered on the thread, where
 * the result was just projected and its text is still known, and comes back as bytes.
 */
export const startPipelineThread = (options: {
  setup: PipelineThreadSetup;
  /** the position the read models include at start (their checkpoint) */
  projectedAt: number;
  /** the HTTP thread's event store was told (appendedElsewhere) */
  onAppended: (position: number) => void;
  resolveTargeting: (request: SearchRequest) => ResolvedTargeting;
  /** where Google placed a page of the thread's crawls, judged with the geotargets of this thread */
  judgeLocation: LocationJudge;
  /** the thread failed after it was ready: nothing is crawled or projected any more */
  onFailed: (err: Error) => void;
}): PipelineThread => {
  const worker = startThread('runtime/pipelineWorker', {
    workerData: options.setup,
    resourceLimits: PIPELINE_THREAD_LIMITS,
  });
  const post = (m: ToPipeline) => worker.postMessage(m);

  const projected = createProjectedPosition(options.projectedAt);
  const requests = new Map<number, { resolve: (m: FromPipeline) => void; reject: (err: Error) => void }>();
  let nextId = 1;
  let ended: Error | undefined;
  let closing = false;

  let markReady: (v: { warning?: string }) => void = () => undefined;
  let failStart: (err: Error) => void = () => undefined;
  const ready = new Promise<{ warning?: string }>((resolve, reject) => {
    markReady = resolve;
    failStart = reject;
  });
  let isReady = false;

  const request = <T extends FromPipeline>(m: ToPipeline & { id: number }) =>
    new Promise<T>((resolve, reject) => {
      if (ended) return reject(ended);
      requests.set(m.id, { resolve: resolve as (m: FromPipeline) => void, reject });
      post(m);
    });

  worker.on('message', (m: FromPipeline) => {
    switch (m.type) {
      case 'ready':
        isReady = true;
        projected.reached(m.position);
        markReady({ warning: m.warning });
        return;
      case 'failed':
        // the thread could not compose its side (it reports, then stops whatever it had started)
        if (!isReady) failStart(new Error(m.error.message));
        void worker.terminate();
        return;
      case 'appended':
        options.onAppended(m.position);
        return;
      case 'threadFault':
        reportThreadFault(m.thread, m.cause);
        return;
      case 'projected':
        projected.reached(m.position);
        return;
      case 'resolve':
        try {
          post({ type: 'resolved', id: m.id, resolution: resolutionOf(options.resolveTargeting, m.request) });
        } catch (err) {
          post({ type: 'resolved', id: m.id, error: toThrownError(err) });
        }
        return;
      case 'judge':
        void Promise.resolve()
          .then(() => options.judgeLocation(m.request, m.location, m.detected))
          .then(
            (judgement) => post({ type: 'judged', id: m.id, judgement }),
            (err: unknown) => post({ type: 'judged', id: m.id, error: toThrownError(err) }),
          );
        return;
      case 'rendered':
      case 'metrics':
      case 'queueStats': {
        const r = requests.get(m.id);
        requests.delete(m.id);
        r?.resolve(m);
        return;
      }
      default:
        return;
    }
  });
  const exited = whenThreadEnds(worker, 'pipeline thread', (why) => {
    ended = why;
    for (const r of requests.values()) r.reject(why);
    requests.clear();
    projected.end(why);
    if (!isReady) failStart(why);
    else if (!closing) options.onFailed(why);
  });

  const projector: Projector = {
    ...projected.projector,
    start: async () => {
      await ready;
    },
  };

  return {
    ready,
    projector,
    async metricsText() {
      const m = await request<Extract<FromPipeline, { type: 'metrics' }>>({ type: 'metrics', id: nextId++ });
      return m.text;
    },
    async queueStats() {
      const m = await request<Extract<FromPipeline, { type: 'queueStats' }>>({ type: 'queueStats', id: nextId++ });
      return m.stats;
    },
    async renderElsewhere(job, output, opts) {
      if (ended) return undefined;
      const m = await request<Extract<FromPipeline, { type: 'rendered' }>>({
        type: 'render',
        id: nextId++,
        job,
        output,
        ...(opts.start === undefined ? {} : { start: opts.start }),
        baseUrl: opts.baseUrl,
        ...(opts.encoding ? { encoding: opts.encoding } : {}),
      }).catch(() => undefined);
      if (!m?.json || !m.etag) return undefined;
      return {
        json: asBuffer(m.json),
        etag: m.etag,
        ...(m.compressed
          ? { compressed: { encoding: m.compressed.encoding, bytes: asBuffer(m.compressed.bytes) } }
          : {}),
      };
    },
    appended(position) {
      if (!ended) post({ type: 'appended', position });
    },
    async close() {
      closing = true;
      if (ended) return;
      post({ type: 'close' });
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        exited,
        new Promise<void>((resolve) => {
          timer = setTimeout(() => void worker.terminate().then(() => resolve()), CLOSE_TIMEOUT_MS);
        }),
      ]);
      clearTimeout(timer);
    },
  };
};

/** a Buffer arrives as a plain Uint8Array: a Buffer again, over the same bytes */
const asBuffer = (b: Uint8Array): Buffer =>
  Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
