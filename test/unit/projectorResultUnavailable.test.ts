import { join } from 'node:path';
import t from 'tap';
import { DomainEvent, streams } from '../../contracts/events.js';
import type { ParsedSerp } from '../../contracts/result.js';
import { SearchRequest } from '../../contracts/search.js';
import { allProjections, readModelQueries } from '../../projections/index.js';
import { createFsBlobStore } from '../../services/adapters/blobStore/fs.js';
import { createSqliteEventStore } from '../../services/adapters/eventStore/sqlite.js';
import { createSqliteReadModelStore } from '../../services/adapters/readModel/sqlite.js';
import { resultBlobKey } from '../../services/answers/resultBlobs.js';
import type { BlobStore } from '../../services/ports/blobStore.js';
import { StoreUnavailableError } from '../../services/ports/unavailable.js';
import { createProjector } from '../../services/projector/projector.js';
import { removeDir, tempDataDir } from '../support/service.js';

/**
 * Distributed mode reads a finished job's result from the NATS object store while it projects the job's
 * CrawlCompleted (docs/distributed.md#the-other-nats-adapters). That read can fail for a moment (a node restarting, a
 * busy cluster) where embedded mode's files never do. A result that is gone (purged) makes no document, by design; a
 * read that failed must not be taken for one, or the job answers 202 "running" for ever while the log says done.
 */
t.test('a result the blob store failed to read is projected once it reads again, not dropped', async (t) => {
  const dir = tempDataDir('serp-result-unavailable');
  const eventStore = createSqliteEventStore({ path: join(dir, 'events.db'), pollIntervalMs: 20 });
  const files = createFsBlobStore(join(dir, 'blobs'));
  let failing = 0;
  const reads: string[] = [];
  const blobStore: BlobStore = {
    ...files,
    get: async (key) => {
      reads.push(key);
      if (failing > 0) {
        failing--;
        throw new StoreUnavailableError('raw HTML store (test)', new Error('timeout'));
      }
      return files.get(key);
    },
  };
  const readModels = createSqliteReadModelStore(join(dir, 'read.db'));
  const errors: unknown[] = [];
  const projector = createProjector({
    eventStore,
    readModels,
    projections: allProjections,
    blobStore,
    onError: (err) => errors.push(err),
  });
  await projector.start();
  t.teardown(async () => {
    await projector.stop();
    readModels.close();
    await eventStore.close();
    removeDir(dir);
  });
  const queries = readModelQueries(readModels);
  // bounded, and a timer that holds the process: the subscription's retry timer alone does not (it is unref'd)
  const projected = async (position: number) => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`position ${position} not projected within 20 s`)), 20_000);
    });
    try {
      await Promise.race([projector.waitFor(position), late]);
    } finally {
      clearTimeout(timer);
    }
  };

  const result: ParsedSerp = {
    organic_results: [{ position: 1, title: 'Coffee', link: 'https://example.com/' }],
    serp_features: {},
    information: {},
  };
  const at = (s: number) => new Date(Date.UTC(2026, 11, 7, 12, 0, s)).toISOString();
  const finish = async (jobId: string) => {
    const resultRef = await files.put(resultBlobKey(jobId), JSON.stringify(result));
    const rawHtmlRef = await files.put(`raw/${jobId}.html`, '<html></html>');
    const events = [
      {
        type: 'SearchSubmitted',
        data: {
          jobId,
          keyId: 'k1',
          request: SearchRequest.parse({ keyword: 'coffee' }),
          cacheKey: `ck-${jobId}`,
          charged: true,
          month: '202612',
          submittedAt: at(0),
        },
      },
      { type: 'CrawlStarted', data: { jobId, attempt: 1, worker: 'crawler-1', startedAt: at(1) } },
      {
        type: 'CrawlCompleted',
        data: {
          jobId,
          status: 'done',
          pages: [],
          resultRef,
          rawHtmlRef,
          parserVersion: '1',
          cacheKey: `ck-${jobId}`,
          blocks: 0,
          completedAt: at(2),
        },
      },
    ].map((e) => DomainEvent.parse(e));
    const appended = await eventStore.appendToStream(streams.searchJob(jobId), events);
    await projected(appended.lastGlobalPosition);
  };

  failing = 2;
  await finish('j-unavailable');
  t.equal(queries.jobs.byId('j-unavailable')?.status, 'done', 'the job reads done');
  t.same(
    queries.results.byJobId('j-unavailable')?.result,
    result,
    'and its result is there to answer with: the batch was read again once the store answered',
  );
  t.ok(
    errors.some((e) => e instanceof StoreUnavailableError),
    'the failed read was reported as the projector reports any failed batch',
  );
  t.equal(reads.filter((k) => k === resultBlobKey('j-unavailable')).length, 3, 'two reads failed, the third answered');

  // a result that is gone (retention deleted it) still makes no document, without holding the projector up
  const resultRef = await files.put(resultBlobKey('j-gone'), JSON.stringify(result));
  await files.delete(resultRef.key);
  const events = [
    {
      type: 'SearchSubmitted',
      data: {
        jobId: 'j-gone',
        keyId: 'k1',
        request: SearchRequest.parse({ keyword: 'tea' }),
        cacheKey: 'ck-gone',
        charged: true,
        month: '202612',
        submittedAt: at(3),
      },
    },
    {
      type: 'CrawlCompleted',
      data: {
        jobId: 'j-gone',
        status: 'done',
        pages: [],
        resultRef,
        rawHtmlRef: { key: 'raw/j-gone.html', sha256: '0'.repeat(64), bytes: 1 },
        parserVersion: '1',
        cacheKey: 'ck-gone',
        blocks: 0,
        completedAt: at(4),
      },
    },
  ].map((e) => DomainEvent.parse(e));
  const appended = await eventStore.appendToStream(streams.searchJob('j-gone'), events);
  await projected(appended.lastGlobalPosition);
  t.equal(queries.jobs.byId('j-gone')?.status, 'done', 'a job whose result is gone is still projected');
  t.equal(queries.results.byJobId('j-gone'), undefined, 'with no result document');
});
