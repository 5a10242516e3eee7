import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import t from 'tap';
import { ParsedSerp } from '../../contracts/result.js';
import { createFsBlobStore } from '../../services/adapters/blobStore/fs.js';
import { createHttpFetcher } from '../../services/adapters/fetcher/http.js';
import { loadResult, putPreparedResult, putResult } from '../../services/application/resultBlobs.js';
import { loadConfig } from '../../services/compose/config.js';
import { createThreadedCrawler, fromThrownError, toThrownError } from '../../services/compose/crawlThread.js';
import { createCrawler } from '../../services/crawler/crawl.js';
import {
  CrawlAbortedError,
  CrawlBlockedError,
  CrawlRequestError,
  CrawlTransientError,
} from '../../services/crawler/errors.js';
import { unpackRaw } from '../../services/crawler/rawPacker.js';
import { createSessionPool } from '../../services/crawler/sessions.js';
import type { ResolvedTargeting } from '../../services/crawler/targeting.js';
import { joinMembers, serialiseDoc } from '../../services/knownJson.js';
import type { BlobWriter } from '../../services/ports/blobStore.js';
import { chromiumMissing, chromiumPath } from '../support/chromium.js';
import { FAST_LIMITS, jobFor } from '../support/crawlerHarness.js';
import { AIO_QUERY, startFakeGoogle } from '../support/fakeGoogle.js';
import { fixturesMissing } from '../support/fixtures.js';

/** a blob writer that keeps what it is given */
const collectingSink = () => {
  const parts: Buffer[] = [];
  const sink: BlobWriter = {
    append: (part) => void parts.push(Buffer.from(part)),
    commit: async () => ({ key: 'k', sha256: '', bytes: 0 }),
    abort: async () => undefined,
  };
  return { sink, text: () => gunzipSync(Buffer.concat(parts)).toString('utf8'), parts };
};

/** raw HTML without the fetch times its page markers carry */
const unstamped = (raw: string) => raw.replace(/ fetched_at=\S+/g, '');

/** Austin as the geotargets would resolve it; anything else is an unknown location */
const resolveTargeting = (request: { location?: string }): ResolvedTargeting => {
  if (!request.location) return {};
  if (request.location !== 'Austin,Texas,United States') {
    throw new CrawlRequestError(`unknown location "${request.location}"`, 'unknown_location');
  }
  return {
    location: 'Austin,Texas,United States',
    gl: 'us',
    hl: 'en',
    uule: 'w+CAIQICIaQXVzdGluLFRleGFzLFVuaXRlZCBTdGF0ZXM',
  };
};

t.test('SERP_CRAWL_THREAD: off unless set to 1', async (t) => {
  t.equal(loadConfig({}).crawlThread, false, 'off by default (its heap costs ~40-60 MB of peak RSS)');
  t.equal(loadConfig({ SERP_CRAWL_THREAD: '1' }).crawlThread, true);
  t.equal(loadConfig({ SERP_CRAWL_THREAD: '0' }).crawlThread, false);
  t.throws(() => loadConfig({ SERP_CRAWL_THREAD: 'yes' }), /SERP_CRAWL_THREAD must be a non-negative integer/);
});

t.test('the parse pool gives the crawl thread a core: one thread fewer by default, never none', async (t) => {
  const cores = availableParallelism();
  t.equal(
    loadConfig({ SERP_PIPELINE_THREAD: '0' }).parseThreads,
    cores,
    'without the crawl thread or the pipeline thread: one per core',
  );
  t.equal(loadConfig({ SERP_CRAWL_THREAD: '1' }).parseThreads, Math.max(1, cores - 1));
  t.equal(loadConfig({ SERP_CRAWL_THREAD: '1', SERP_PARSE_THREADS: '3' }).parseThreads, 3, 'a given size wins');
  t.equal(loadConfig({ SERP_CRAWL_THREAD: '1', SERP_PARSE_THREADS: '0' }).parseThreads, 0);
});

t.test('errors cross the thread boundary as the classes the crawl worker tells apart', async (t) => {
  const round = (e: Error) => fromThrownError(toThrownError(e));
  const blocked = round(new CrawlBlockedError('captcha', 'http://g/search', 429));
  t.ok(blocked instanceof CrawlBlockedError);
  t.match(blocked, { kind: 'captcha', url: 'http://g/search', status: 429, code: 'SERP_CRAWL_BLOCKED' });
  const transient = round(new CrawlTransientError('timeout', 'http://g/search', 'timed out after 5 s'));
  t.ok(transient instanceof CrawlTransientError);
  t.match(transient, { kind: 'timeout', message: 'timed out after 5 s', status: undefined });
  const request = round(new CrawlRequestError('HTTP 404 from Google', 'http_status', 404));
  t.ok(request instanceof CrawlRequestError);
  t.match(request, { kind: 'http_status', status: 404 });
  t.ok(round(new CrawlAbortedError()) instanceof CrawlAbortedError);
  const other = round(new TypeError('x is not a function'));
  t.equal(other.constructor, Error, 'anything else is a plain Error');
  t.equal(other.message, 'x is not a function');
});

t.test(
  'a crawl on the crawl thread gives what the same crawl gives on the event loop',
  { skip: fixturesMissing() },
  async (t) => {
    const google = await startFakeGoogle();
    t.teardown(() => google.close());
    const setup = {
      fetcher: 'http' as const,
      googleOrigin: google.origin,
      proxyUrls: [],
      limits: { ...FAST_LIMITS },
      parseThreads: 1,
    };
    const threaded = createThreadedCrawler(setup, resolveTargeting);
    t.teardown(() => threaded.close());
    const inline = createCrawler({
      googleOrigin: google.origin,
      fetchers: { http: createHttpFetcher() },
      fetcherMode: 'http',
      sessions: createSessionPool({}),
      limits: FAST_LIMITS,
      resolveTargeting,
    });
    t.teardown(() => inline.close());

    let beats = 0;
    const heartbeat = () => {
      beats += 1;
    };
    const request = { keyword: 'coffee', location: 'Austin,Texas,United States' };
    const viaSink = collectingSink();
    const there = await threaded.crawl(jobFor(request), { heartbeat, rawSink: viaSink.sink });
    const here = await inline.crawl(jobFor(request), { heartbeat: () => undefined });
    t.equal(there.status, 'done');
    t.equal(there.pages.length, here.pages.length, 'as many pages');
    t.same(there.result, here.result, 'the same merged result');
    t.same(there.targeting, here.targeting, 'the location resolved on the calling thread went into the URL');
    t.equal(there.targeting?.location, 'Austin,Texas,United States');
    t.match(google.searches()[0]?.query, { uule: resolveTargeting(request).uule });
    t.ok(beats >= there.pages.length, `the heartbeat came back for every fetch (${beats})`);
    t.notOk(there.raw?.gzip, 'with a blob writer the raw HTML is not in the outcome');
    t.equal(
      unstamped(viaSink.text()),
      unstamped(unpackRaw(here.raw!)),
      'the members the writer got are the raw HTML, page for page',
    );
    t.equal(there.raw?.sha256, createHash('sha256').update(viaSink.text()).digest('hex'), 'and the digest is theirs');

    // the result comes ready for the blob store: what putResult would write, made on the crawl thread
    const prepared = there.prepared;
    t.ok(prepared && Buffer.isBuffer(prepared.gzip), 'the result comes prepared, its gzip a Buffer');
    t.notOk(here.prepared, 'a crawl on the event loop leaves that to putResult');
    const contract = ParsedSerp.parse(here.result);
    const text = joinMembers(prepared!.members);
    t.equal(text, JSON.stringify(contract), 'its text: the result in the contract shape and key order');
    t.equal(gunzipSync(prepared!.gzip).toString('utf8'), text, 'gzipped');
    t.equal(prepared?.sha256, createHash('sha256').update(text).digest('hex'), 'the digest of its text');
    t.equal(prepared?.bytes, Buffer.byteLength(text));
    t.same(
      prepared?.members.map(([k]) => k),
      Object.keys(contract),
      'a text for each member, in the contract order',
    );
    const dir = mkdtempSync(join(tmpdir(), 'crawl-thread-blobs-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const blobs = createFsBlobStore(dir);
    const ref = await putPreparedResult(blobs, 'results/prepared.json', there.result!, prepared!);
    const written = await putResult(blobs, 'results/here.json', here.result!);
    t.equal(ref.sha256, written.sha256, 'the same blob putResult writes for the same result on the event loop');
    t.equal(ref.bytes, written.bytes);
    t.equal(
      await loadResult(blobs, { resultRef: ref }),
      there.result,
      'the projector is handed the result itself, not a read back',
    );
    t.same(await loadResult(blobs, { resultRef: ref }), contract, 'read back from the file later: the same result');
    const doc = serialiseDoc({ jobId: 'j', result: there.result, organic: there.result?.organic_results });
    t.ok(doc.spliced, 'documents embedding the result or its members are written from the texts made there');
    t.equal(
      doc.json,
      JSON.stringify({ jobId: 'j', result: contract, organic: contract.organic_results }),
      'and are what JSON.stringify writes',
    );

    const noSink = await threaded.crawl(jobFor(request), { heartbeat });
    t.ok(Buffer.isBuffer(noSink.raw?.gzip), 'without a writer the raw HTML comes back in the outcome');
    t.equal(unstamped(unpackRaw(noSink.raw!)), unstamped(unpackRaw(here.raw!)));

    const unknown = await threaded.crawl(jobFor({ keyword: 'coffee', location: 'Atlantis' }), { heartbeat });
    t.match(unknown, {
      status: 'failed',
      failure: { code: 'SERP_CRAWL_BAD_REQUEST', kind: 'unknown_location' },
      reason: /unknown location "Atlantis"/,
    });

    const aborting = new AbortController();
    const slow = threaded.crawl(jobFor({ keyword: 'slow coffee' }), { heartbeat, signal: aborting.signal });
    setTimeout(() => aborting.abort(), 5);
    await t.rejects(slow, CrawlAbortedError, 'an abort on the calling thread stops the crawl there');
    await t.rejects(
      threaded.crawl(jobFor(request), { heartbeat, signal: AbortSignal.abort() }),
      CrawlAbortedError,
      'an aborted signal never starts one',
    );
    const after = await threaded.crawl(jobFor(request), { heartbeat });
    t.equal(after.status, 'done', 'the thread goes on crawling after an abort');
    await threaded.close();
    await t.rejects(threaded.crawl(jobFor(request), { heartbeat }), CrawlAbortedError, 'closed: no new crawl');
  },
);

t.test('a thread that dies fails the crawls it holds, and the next crawl starts another', async (t) => {
  // a setup the parse pool refuses (config.ts never makes one) fails the thread as it starts
  const threaded = createThreadedCrawler({ fetcher: 'http', proxyUrls: [], parseThreads: -1 });
  t.teardown(() => threaded.close());
  const heartbeat = () => undefined;
  await t.rejects(threaded.crawl(jobFor({ keyword: 'a' }), { heartbeat }), /crawl thread failed: .*minThreads/);
  await t.rejects(
    threaded.crawl(jobFor({ keyword: 'b' }), { heartbeat }),
    /crawl thread failed: .*minThreads/,
    'a new thread took the next crawl (a dead one would leave it waiting forever)',
  );
});

t.test(
  'the browser fetcher runs on the crawl thread: real Chromium keeps the AI Overview',
  { skip: fixturesMissing() ?? chromiumMissing() },
  async (t) => {
    const google = await startFakeGoogle({ aioDelayMs: 500 });
    t.teardown(() => google.close());
    const threaded = createThreadedCrawler({
      fetcher: 'browser',
      chromiumPath,
      googleOrigin: google.origin,
      proxyUrls: [],
      limits: { ...FAST_LIMITS, maxPages: 1, pageTimeoutMs: 15_000 },
      parseThreads: 1,
    });
    t.teardown(() => threaded.close());
    const outcome = await threaded.crawl(jobFor({ keyword: AIO_QUERY, capture_aio: true }), {
      heartbeat: () => undefined,
    });
    t.equal(outcome.status, 'done');
    t.equal(outcome.pages[0]?.fetcher, 'browser');
    t.ok((outcome.result?.ai_overview?.text_blocks.length ?? 0) > 0, 'the parsed result has the AI Overview');
  },
);
