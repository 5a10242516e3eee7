import { rmSync, writeFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { createMemoryRateLimiter } from '../../adapters/rateLimiter/memory.js';
import { createServer } from '../../api/server.js';
import type { Config } from '../../config/config.js';
import { createTargetingResolver } from '../../crawler/targeting.js';
import { runningFleet } from '../../fairShare/capacity.js';
import { createQueuePositions } from '../../fairShare/queuePosition.js';
import { judgeWith } from '../../geo/locationCheck.js';
import { createLocationResolver } from '../../geo/locations.js';
import { createMetrics } from '../../metrics/metrics.js';
import { exposedDataDir, PRIVATE_FILE_MODE } from '../../privateFiles.js';
import { createOwnWrites } from '../../projector/ownWrites.js';
import { PROJECTOR_CHECKPOINT } from '../../projector/projector.js';
import { lowerHelperThreads } from '../../threads/nice.js';
import { startSupervisedPipeline } from '../../threads/pipelineSupervisor.js';
import type { PipelineThread } from '../../threads/pipelineThread.js';
import { armThreadFaults, logThreadFaultsTo } from '../../threads/threadFaults.js';
import { composeApi } from '../application.js';
import { jsonLines } from '../logLines.js';
import { composeRenderer } from '../renderer.js';
import { packageVersion } from '../version.js';
import { type Core, dataPaths, openCore, takeServeLock } from './core.js';
import { composeWriteSide, type WriteSide } from './writeSide.js';

export interface Embedded {
  app: FastifyInstance;
  url: string;
  core: Core;
  /** lines for the operator: what start-up decided differently from the configuration (a fetcher fallback) */
  warnings: string[];
  close(): Promise<void>;
}

/** `serp-api serve`: every role in one process, no servers (docs/design.md#two-modes-one-code-base). */
export const startEmbedded = async (config: Config, options: { logger?: boolean } = {}): Promise<Embedded> => {
  const paths = dataPaths(config.dataDir);
  // before anything here creates it: an existing directory others can read is worth a word at start
  const exposed = exposedDataDir(config.dataDir);
  // With the pipeline thread the event loop only answers HTTP, and V8's and libuv's helpers work mostly for the write
  // side's threads: below the event loop, as those are. Done before any thread of ours starts (the event store's writer
  // thread stays at the loop's priority: submits wait on it). Without the pipeline thread they stay at the loop's: the
  // loop's own heap is the projector's, and slower collections of it cost test/bench/pipeline.ts 30 MB of peak RSS.
  if (config.pipelineThread) lowerHelperThreads();
  const releaseLock = takeServeLock(config.dataDir);
  // the tests' fault injection, for the threads this thread starts (SERP_CHAOS_FAULTS; none unless set)
  armThreadFaults(config.chaosFaults);
  // a thread's fault is logged with the service's JSON lines (docs/architecture.md#when-a-thread-fails)
  if (options.logger !== false) logThreadFaultsTo((line) => void process.stdout.write(line));
  // one resolver for the process: the api validates `location` with it and the crawler targets with it
  const locations = createLocationResolver(config.dataDir);
  const log = jsonLines(config.logLevel, options.logger);
  let pipeline: PipelineThread | undefined;
  let core: Core;
  try {
    // the shipped geotargets index takes ~0.4 s to build: pay it at start, not on the first request with a location
    locations.searchLocations('warm', 1);
    core = await openCore(config, {
      writerThread: true,
      ...(config.pipelineThread
        ? {
            onCommitted: (position: number) => {
              pipeline?.appended(position);
            },
            projectorElsewhere: (stores) => {
              pipeline = startSupervisedPipeline({
                setup: { config, logger: options.logger !== false },
                projectedAt: () => stores.readModels.checkpoint(PROJECTOR_CHECKPOINT),
                onAppended: (position) => stores.eventStore.appendedElsewhere(position),
                resolveTargeting: createTargetingResolver(locations),
                judgeLocation: judgeWith({ resolve: (name) => locations.resolveLocation(name) }),
                // a failure it cannot come back from (docs/operations.md#exit-codes): stop, saying which, so a
                // supervisor starts the service again (every acknowledged write is in the log, and the queue is
                // rebuilt from it)
                exit: (code, line) => {
                  process.stderr.write(`serp-api: ${line}; stopping (exit code ${code})\n`);
                  process.exit(code);
                },
              });
              return pipeline.projector;
            },
          }
        : {}),
    });
  } catch (err) {
    locations.close();
    releaseLock();
    throw err;
  }
  let writeSide: WriteSide & { renderElsewhere?: PipelineThread['renderElsewhere'] };
  if (pipeline) {
    const thread = pipeline;
    const { warning } = await thread.ready;
    writeSide = {
      queueStats: () => thread.queueStats(),
      metricsText: () => thread.metricsText(),
      renderElsewhere: thread.renderElsewhere,
      warning,
      start: async () => undefined,
      stop: () => thread.close(),
    };
  } else {
    writeSide = await composeWriteSide({
      config,
      eventStore: core.eventStore,
      readModels: core.readModels,
      queries: core.queries,
      blobStore: core.blobStore,
      handle: core.handle,
      projected: core.projected,
      pepper: core.secrets.keyPepper,
      locations,
      log,
    });
  }
  // where queued jobs stand, followed from the log on this thread (the 202s, the lane gauges, the dashboard's queue)
  const queuePositions = createQueuePositions({
    ...core,
    laneMinShare: config.laneMinShare,
    laneSlots: config.crawlerConcurrency,
    fleet: runningFleet(config.proxyUrls),
  });
  await queuePositions.start();
  const metrics = createMetrics({
    queueStats: () => writeSide.queueStats(),
    monitors: () => core.queries.monitors.dueCount(new Date()),
    lanes: () => queuePositions.counts(),
    routePlaces: () => core.queries.routePlacements.standings(),
    writeSide: () => writeSide.metricsText(),
    projection: async () => ({
      head: await core.eventStore.headPosition(),
      projected: core.readModels.checkpoint(PROJECTOR_CHECKPOINT),
    }),
  });
  await metrics.follow(core.eventStore);
  const rateLimiter = createMemoryRateLimiter();
  const renderer = composeRenderer(config);
  const ownWrites = pipeline ? createOwnWrites((position) => core.projector.waitFor(position)) : undefined;
  const app = await createServer(
    composeApi(
      {
        ...core,
        rateLimiter,
        locations,
        // on this thread the projector takes each append from memory right after its commit; on the pipeline thread
        // it is projected a moment later, so a usage read waits for its own key's appends (bounded)
        ...(ownWrites ? { handle: ownWrites.tracking(core.handle), ownWritesProjected: ownWrites.settled } : {}),
        version: packageVersion(),
        metrics,
        renderElsewhere: writeSide.renderElsewhere,
        queuePositions,
        ...(renderer ? { renderer } : {}),
      },
      config,
    ),
    { settings: config, logger: options.logger },
  );
  await writeSide.start();
  const url = await app.listen({ port: config.port, host: config.host });
  writeFileSync(paths.server, `${JSON.stringify({ pid: process.pid, url }, null, 2)}\n`, { mode: PRIVATE_FILE_MODE });
  let closing: Promise<void> | undefined;
  return {
    app,
    url,
    core,
    warnings: [...(exposed ? [exposed] : []), ...(writeSide.warning ? [writeSide.warning] : [])],
    close: () => {
      closing ??= (async () => {
        await app.close();
        await renderer?.close();
        await queuePositions.stop();
        await metrics.stop();
        await writeSide.stop();
        await rateLimiter.close();
        locations.close();
        await core.close();
        rmSync(paths.server, { force: true });
        releaseLock();
      })();
      return closing;
    },
  };
};
