/**
 * Event and replay cost (docs/benchmarks.md#event-log-and-replay): the same N finished jobs recorded two ways, as
 * earlier versions wrote them (the parsed result inside `CrawlCompleted`) and as they are written now (the result in
 * the blob store, the event holding its reference). Prints the event log's bytes per job and `projections rebuild`
 * events/s and jobs/s for both, alternated over rounds (the first side changes each round, compare.ts), with the
 * ratio. Both rebuilds produce the same read models: the reference path pays its blob reads and gunzips, the inline
 * path its larger rows. `npx tsx test/bench/replay.ts [jobs] [rounds]`. Prints figures only; never asserts a time.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { streams } from '../../contracts/events.js';
import { ParsedSerp } from '../../contracts/result.js';
import { parse } from '../../parser/index.js';
import { allProjections } from '../../projections/index.js';
import { createFsBlobStore } from '../../services/adapters/blobStore/fs.js';
import { createSqliteEventStore } from '../../services/adapters/eventStore/sqlite.js';
import { createSqliteReadModelStore } from '../../services/adapters/readModel/sqlite.js';
import { putResult, resultBlobKey } from '../../services/answers/resultBlobs.js';
import type { BlobStore } from '../../services/ports/blobStore.js';
import { rebuildReadModels } from '../../services/projector/projector.js';
import { fixturesMissing, listSerpPages, readFixtureText } from '../support/fixtures.js';
import { alternate, machineNote, printRatio } from './compare.js';

const jobs = Number(process.argv[2] ?? 300);
const rounds = Number(process.argv[3] ?? 2);
const missing = fixturesMissing();
if (missing) {
  console.log(`skipped: ${missing}`);
  process.exit(0);
}

// ten-page results as a crawl merges them: ten fixture pages' organic results renumbered, the first page's features
const pages = listSerpPages()
  .map((p) => parse(readFixtureText(p), { captureAio: true }))
  .flatMap((o) => (o.kind === 'serp' && o.serp.organic_results.length >= 5 ? [o.serp] : []));
const results = Array.from({ length: 20 }, (_, i) => {
  const ten = Array.from({ length: 10 }, (_, k) => pages[(i * 10 + k) % pages.length]);
  return ParsedSerp.parse({
    ...ten[0],
    organic_results: ten.flatMap((s) => s.organic_results).map((r, n) => ({ ...r, position: n + 1 })),
  });
});
const avgResultBytes = results.reduce((n, r) => n + JSON.stringify(r).length, 0) / results.length;

const record = async (dir: string, inline: boolean) => {
  mkdirSync(dir, { recursive: true });
  const eventStore = createSqliteEventStore({ path: join(dir, 'events.db') });
  const blobStore = createFsBlobStore(join(dir, 'blobs'));
  const at = new Date().toISOString();
  for (let i = 0; i < jobs; i++) {
    const jobId = `${Date.now().toString(16).padStart(12, '0')}${i.toString(16).padStart(12, '0')}`;
    const result = results[i % results.length];
    const resultPart = inline ? { result } : { resultRef: await putResult(blobStore, resultBlobKey(jobId), result) };
    const rawHtmlRef = { key: `raw/${jobId}.html`, sha256: '0'.repeat(64), bytes: 7_000_000 };
    await eventStore.appendToStream(streams.usage('key_bench', '202611'), [
      {
        type: 'QuotaReserved',
        data: { keyId: 'key_bench', month: '202611', jobId, reservedAt: at },
        metadata: { eventId: randomUUID() },
      },
    ]);
    await eventStore.appendToStream(streams.searchJob(jobId), [
      {
        type: 'SearchSubmitted',
        data: {
          jobId,
          keyId: 'key_bench',
          request: { keyword: `keyword ${i}`, device: 'desktop', capture_aio: true, no_cache: false },
          cacheKey: `ck${i}`,
          charged: true,
          month: '202611',
          submittedAt: at,
        },
      },
      { type: 'CrawlStarted', data: { jobId, attempt: 1, worker: 'bench', startedAt: at } },
      {
        type: 'CrawlCompleted',
        data: {
          jobId,
          status: 'done',
          pages: [],
          ...resultPart,
          rawHtmlRef,
          parserVersion: '1',
          cacheKey: `ck${i}`,
          blocks: 0,
          completedAt: at,
        },
      },
    ]);
  }
  await eventStore.close();
};

const rebuild = async (dir: string, blobStore: BlobStore | undefined) => {
  const eventStore = createSqliteEventStore({ path: join(dir, 'events.db') });
  const readModels = createSqliteReadModelStore(join(dir, `read-${randomUUID()}.db`));
  const t0 = performance.now();
  const r = await rebuildReadModels(eventStore, readModels, allProjections, blobStore);
  const ms = performance.now() - t0;
  const docs = readModels.dump().length;
  readModels.close();
  await eventStore.close();
  return { ms, events: r.events, docs };
};

const base = mkdtempSync(join(tmpdir(), 'replay-bench-'));
try {
  const inlineDir = join(base, 'inline');
  const refDir = join(base, 'ref');
  await record(inlineDir, true);
  await record(refDir, false);
  const size = (dir: string) => statSync(join(dir, 'events.db')).size;
  console.log(`${jobs} jobs of ten pages (result JSON ${(avgResultBytes / 1024).toFixed(0)} kB on average)`);
  console.log(
    `event log per job: inline ${(size(inlineDir) / jobs / 1024).toFixed(1)} kB, by reference ${(size(refDir) / jobs / 1024).toFixed(1)} kB (result blobs beside it, gzipped)`,
  );
  const sums = { inline: 0, ref: 0 };
  let events = 0;
  /** rebuilds that did not produce the other side's read models: not the same work */
  let differing = 0;
  await alternate(
    rounds,
    {
      inline: () => rebuild(inlineDir, undefined),
      ref: () => rebuild(refDir, createFsBlobStore(join(refDir, 'blobs'))),
    },
    (r, { inline: a, ref: b }) => {
      if (a.docs !== b.docs || a.events !== b.events) differing += 1;
      events = a.events;
      sums.inline += a.ms;
      sums.ref += b.ms;
      console.log(
        `round ${r + 1} (${r % 2 === 0 ? 'inline' : 'by reference'} first): inline ${((a.events / a.ms) * 1000).toFixed(0)} events/s, by reference ${((b.events / b.ms) * 1000).toFixed(0)} events/s${a.docs !== b.docs ? ` (the rebuilds differ: ${a.docs} vs ${b.docs} documents)` : ''}`,
      );
    },
  );
  const inlineRate = (events * rounds * 1000) / sums.inline;
  const refRate = (events * rounds * 1000) / sums.ref;
  console.log(
    `projections rebuild: inline ${inlineRate.toFixed(0)} events/s (${((jobs * rounds * 1000) / sums.inline).toFixed(0)} jobs/s), by reference ${refRate.toFixed(0)} events/s (${((jobs * rounds * 1000) / sums.ref).toFixed(0)} jobs/s); ${machineNote()}`,
  );
  printRatio(
    'by reference / inline events per second',
    { value: refRate, failures: differing },
    { value: inlineRate, failures: differing },
    ['by reference', 'inline'],
  );
} finally {
  rmSync(base, { recursive: true, force: true });
}
