import { parentPort, workerData } from 'node:worker_threads';
import type { DetectedLocation } from '../../contracts/result.js';
import type { SearchRequest } from '../../contracts/search.js';
import { COMPRESS_MIN_BYTES, compressAnswerSync, etagOf } from '../answers/encoding.js';
import { renderJob } from '../answers/render.js';
import { createCommandHandler } from '../application/commandHandler.js';
import { ownBuffer } from '../buffers.js';
import { openStores } from '../compose/embedded/core.js';
import { loadOrCreateSecrets } from '../compose/embedded/secrets.js';
import { composeWriteSide } from '../compose/embedded/writeSide.js';
import { jsonLines } from '../compose/logLines.js';
import type { Judgement } from '../geo/locationCheck.js';
import { createReadModelProjector, PROJECTOR_CHECKPOINT } from '../projector/projector.js';
import { runInBackground } from '../threads/nice.js';
import {
  type FromPipeline,
  fromThrownError,
  type PipelineThreadSetup,
  resolvedTargetings,
  type TargetingResolution,
  type ToPipeline,
  toThrownError,
} from '../threads/pipelineThread.js';
import { armThreadFaults, faultCounter, forwardThreadFaults, injectedFault } from '../threads/threadFaults.js';

/**
 * The pipeline thread (pipelineThread.ts): the write side of an embedded service, composed as embedded.ts composes
 * it on the event loop, over connections of its own to the same files. The secrets are the ones the HTTP thread
 * loaded (the file exists by now; the environment's values win the same way).
 */
// below the event loop that answers HTTP, as the parse threads are (nice.ts): projecting and crawling yield the core
// to a read. In one readUnderCrawl.ts run (48 jobs, 2 rounds, beside the crawl thread of then) read p99 under crawl
// was 9.8 ms at the default priority and 9.5 ms at this one, within the spread; the crawl's throughput did not
// move (test/bench/pipeline.ts, one parse thread: 6.9 jobs/s at nice 5, 6.8–7.1 at 10). Linux only (nice.ts).
runInBackground();
const port = parentPort!;
const post = (m: FromPipeline, transfer: ArrayBuffer[] = []) => port.postMessage(m, transfer);
/**
 * A position told to the main thread once for many: this thread commits and projects thousands of times a second while
 * a webhook backlog drains, and a message each cost it a tenth of its time in postMessage
 * (docs/benchmarks.md#webhook-backlog). The newest position is sent on the next turn (`projected`: a read waiting on it
 * waits a turn at most), or `afterMs` later (`appended`: it only wakes the main thread's metrics follower, which also
 * polls).
 */
const newest = (type: 'appended' | 'projected', afterMs: number) => {
  let position = 0;
  let armed = false;
  const send = () => {
    armed = false;
    post({ type, position });
  };
  return (at: number) => {
    position = Math.max(position, at);
    if (armed) return;
    armed = true;
    if (afterMs > 0) setTimeout(send, afterMs);
    else setImmediate(send);
  };
};
const tellAppended = newest('appended', 10);
const tellProjected = newest('projected', 0);
const { config, logger } = workerData as PipelineThreadSetup;
// the faults of the threads this thread starts are counted and logged on the main thread (threadFaults.ts)
forwardThreadFaults((thread, cause) => post({ type: 'threadFault', thread, cause }));
armThreadFaults(config.chaosFaults);
const pipelineFault = faultCounter('pipeline');

/** each crawl's request → its location as the HTTP thread resolved it (asked before each crawl) */
const resolved = resolvedTargetings();
const asked = new Map<number, (m: Extract<ToPipeline, { type: 'resolved' }>) => void>();
let nextAsk = 1;
const askTargeting = (request: SearchRequest) =>
  new Promise<TargetingResolution>((resolve, reject) => {
    const id = nextAsk++;
    asked.set(id, (m) => ('error' in m ? reject(fromThrownError(m.error)) : resolve(m.resolution)));
    post({ type: 'resolve', id, request });
  });

/** where Google placed a page, judged on the HTTP thread (the geotargets are there); a failure judges nothing */
const judged = new Map<number, (m: Extract<ToPipeline, { type: 'judged' }>) => void>();
const askJudgement = (request: SearchRequest, location: string | undefined, detected: DetectedLocation | undefined) =>
  new Promise<Judgement>((resolve) => {
    const id = nextAsk++;
    judged.set(id, (m) =>
      resolve(
        'error' in m ? { status: 'unverified', reason: `the location check failed: ${m.error.message}` } : m.judgement,
      ),
    );
    post({ type: 'judge', id, request, ...(location ? { location } : {}), ...(detected ? { detected } : {}) });
  });

/** messages that came before the thread was composed (a close, an append elsewhere), handled once it is */
const early: ToPipeline[] = [];
let onMessage: (m: ToPipeline) => void = (m) => {
  early.push(m);
};
// listening from the start: a crawl asks its location while the composition is still finishing
port.on('message', (m: ToPipeline) => {
  if (m.type === 'judged') {
    const answer = judged.get(m.id);
    judged.delete(m.id);
    return answer?.(m);
  }
  if (m.type !== 'resolved') return onMessage(m);
  const answer = asked.get(m.id);
  asked.delete(m.id);
  answer?.(m);
});

const start = async () => {
  const { secrets } = loadOrCreateSecrets(config.dataDir, {
    keyPepper: config.keyPepper,
    adminToken: config.adminToken,
    linkSecret: config.linkSecret,
  });
  // the same stores as the HTTP thread's, over connections of this thread's own
  const stores = openStores(config.dataDir, {
    // its commits' fsyncs (and waits for the HTTP thread's writer to let go of the file) off this thread's loop too
    writerThread: true,
    onCommitted: tellAppended,
  });
  const { eventStore, readModels, queries, blobStore } = stores;
  const projector = createReadModelProjector({ eventStore, readModels, blobStore, onProjected: tellProjected });
  await projector.start();
  const handle = createCommandHandler(eventStore);
  const writeSide = await composeWriteSide({
    config,
    eventStore,
    readModels,
    queries,
    blobStore,
    handle,
    projected: (position) => projector.waitFor(position),
    pepper: secrets.keyPepper,
    locations: resolved.resolveTargeting,
    judgeLocation: askJudgement,
    beforeCrawl: async (message) => {
      if (pipelineFault()) {
        // a real fault (SERP_CHAOS_FAULTS): an error nothing catches ends this thread with its crawls in flight
        setImmediate(() => {
          throw injectedFault('pipeline');
        });
      }
      // a job from before submits carried their targeting: its location is resolved on the HTTP thread
      if (!message.targeting) resolved.set(message.request, await askTargeting(message.request));
    },
    log: jsonLines(config.logLevel, logger),
  });
  await writeSide.start();
  const render = (m: Extract<ToPipeline, { type: 'render' }>) => {
    const rendered = renderJob(
      {
        linkSecret: secrets.linkSecret,
        presignTtlS: config.presignTtlS,
        resultOf: (job) => queries.results.byJobId(job.sourceJobId ?? job.jobId),
        hasResult: (job) => queries.results.has(job.sourceJobId ?? job.jobId),
      },
      m.job,
      m.output,
      { start: m.start, baseUrl: m.baseUrl },
    );
    if (!('json' in rendered)) return post({ type: 'rendered', id: m.id });
    const json = typeof rendered.json === 'string' ? Buffer.from(rendered.json, 'utf8') : rendered.json;
    const compressed =
      m.encoding && json.length >= COMPRESS_MIN_BYTES
        ? { encoding: m.encoding, bytes: compressAnswerSync(json, m.encoding) }
        : undefined;
    const transfer = [json, compressed?.bytes].flatMap((b) => {
      const own = b ? ownBuffer(b) : undefined;
      return own ? [own] : [];
    });
    post({ type: 'rendered', id: m.id, json, etag: etagOf(json), ...(compressed ? { compressed } : {}) }, transfer);
  };

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      await writeSide.stop();
      await projector.stop();
      await stores.close();
      port.close();
    })();
    return closing;
  };

  onMessage = (m) => {
    switch (m.type) {
      case 'appended':
        eventStore.appendedElsewhere(m.position);
        return;
      case 'render':
        try {
          render(m);
        } catch {
          post({ type: 'rendered', id: m.id });
        }
        return;
      case 'metrics':
        void writeSide.metricsText().then((text) => post({ type: 'metrics', id: m.id, text }));
        return;
      case 'queueStats':
        void writeSide.queueStats().then((stats) => post({ type: 'queueStats', id: m.id, stats }));
        return;
      case 'close':
        void close();
        return;
      default:
        return;
    }
  };
  for (const m of early.splice(0)) onMessage(m);
  post({
    type: 'ready',
    position: readModels.checkpoint(PROJECTOR_CHECKPOINT),
    ...(writeSide.warning ? { warning: writeSide.warning } : {}),
  });
};

start().catch((err) => {
  post({ type: 'failed', error: toThrownError(err) });
  port.close();
});
