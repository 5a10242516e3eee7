import { existsSync, readdirSync, rmSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import { join } from 'node:path';
import { config, getJson } from 'serpapi';
import t, { type Test } from 'tap';
import { parse } from '../../parser/index.js';
import { chromiumMissing } from '../support/chromium.js';
import { DEFAULT_PAGES, type FakeGoogle, ONE_PAGE, startFakeGoogle } from '../support/fakeGoogle.js';
import { fixturesMissing, readFixtureText } from '../support/fixtures.js';
import { cli, pollJob, type RunningService, removeDir, startService, submit, tempDataDir } from '../support/service.js';

const PNG = '89504e47';

/** the npm serpapi client, unchanged, sent to this service (docs/compat.md#clients) */
const localAgent = (url: string) => {
  const { hostname, port } = new URL(url);
  class LocalAgent extends https.Agent {
    override createConnection() {
      return net.connect({ host: hostname, port: Number(port) });
    }
  }
  return new LocalAgent();
};
/** a PNG's size from its header (IHDR) */
const pngSize = (b: Buffer) => ({ width: b.readUInt32BE(16), height: b.readUInt32BE(20) });

interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}
interface Placed {
  rectangle: Rect | null;
  pixels_from_top: number | null;
  above_the_fold: boolean;
}

/** every result has a rectangle and its top as `pixels_from_top`, and the tops grow in rank order */
const placedInRankOrder = (t: Test, organic: Placed[], placed: string, ordered: string) => {
  t.ok(
    organic.every((r) => r.rectangle && r.rectangle.width > 0 && r.pixels_from_top === r.rectangle.y),
    placed,
  );
  const tops = organic.map((r) => r.pixels_from_top as number);
  t.same(
    tops,
    [...tops].sort((a, b) => a - b),
    `${ordered}: ${tops.join(', ')}`,
  );
};

t.test(
  'screenshots and pixel positions of stored pages',
  { skip: fixturesMissing() ?? chromiumMissing() },
  async (t) => {
    const google: FakeGoogle = await startFakeGoogle({
      ...ONE_PAGE,
      // one query has two pages: the first keeps its "Next" link
      queries: { 'oolong tea': [DEFAULT_PAGES[0] as string, DEFAULT_PAGES[1] as string] },
      transform: (path, html) => (path === DEFAULT_PAGES[0] ? html : ONE_PAGE.transform(path, html)),
      // one query never answers in time: a search that has not finished
      latencyMs: (_start, q) => (q === 'slow coffee' ? 10_000 : 0),
    });
    const data = tempDataDir('screenshots');
    const svc: RunningService = await startService(data, {
      SERP_GOOGLE_ORIGIN: google.origin,
      SERP_DRAIN_TIMEOUT_MS: '1000',
    });
    t.teardown(async () => {
      await svc.stop();
      await google.close();
      removeDir(data);
    });
    const { key } = JSON.parse(await cli(['keys', 'create', '--tier', 'pro', '--json', '--data', data])) as {
      key: string;
    };
    const get = (path: string, headers: Record<string, string> = {}) =>
      fetch(`${svc.url}${path}`, { headers: { 'x-api-key': key, ...headers } });
    const crawl = async (body: Record<string, unknown>) => {
      const { job_id } = (await (await submit(svc.url, key, body)).json()) as { job_id: string };
      const done = await pollJob(svc.url, key, job_id);
      t.equal(done.status, 200, `${String(body.keyword)} crawled`);
      return { jobId: job_id, result: (await done.json()) as Record<string, unknown> };
    };
    const { jobId } = await crawl({ keyword: 'coffee', depth: 10 });
    const googleRequests = google.requests.length;

    await t.test('GET /v1/search/{id}/screenshot answers the page as a PNG, then the kept image', async (t) => {
      const first = await get(`/v1/search/${jobId}/screenshot?viewport=1`);
      t.equal(first.status, 200, '200');
      t.equal(first.headers.get('content-type'), 'image/png', 'a PNG');
      t.equal(first.headers.get('x-serp-render'), 'rendered', 'rendered this time');
      const image = Buffer.from(await first.arrayBuffer());
      t.equal(image.subarray(0, 4).toString('hex'), PNG, 'PNG bytes');
      t.same(pngSize(image), { width: 1366, height: 768 }, "the first screen of the desktop device's viewport");
      const again = await get(`/v1/search/${jobId}/screenshot?viewport=1`);
      t.equal(again.headers.get('x-serp-render'), 'kept', 'the second request reads the kept image');
      t.same(Buffer.from(await again.arrayBuffer()), image, 'the same bytes');
      const kept = readdirSync(join(data, 'blobs', 'render', jobId));
      t.ok(
        kept.some((f) => f.endsWith('.png')),
        `kept in the blob store under render/${jobId}/`,
      );
      t.equal(google.requests.length, googleRequests, 'the render asked the fake Google for nothing');
    });

    await t.test('the whole page, WebP by Accept or format, at a width and scale asked for', async (t) => {
      const page = await get(`/v1/search/${jobId}/screenshot`);
      const full = Buffer.from(await page.arrayBuffer());
      t.ok(pngSize(full).height > 768, `the whole page is taller than a screen: ${pngSize(full).height} px`);
      const webp = await get(`/v1/search/${jobId}/screenshot?viewport=1`, { accept: 'image/webp,image/*;q=0.8' });
      t.equal(webp.headers.get('content-type'), 'image/webp', 'WebP when Accept asks for it');
      t.equal(
        Buffer.from(await webp.arrayBuffer())
          .subarray(8, 12)
          .toString('latin1'),
        'WEBP',
        'WebP bytes',
      );
      const byFormat = await get(`/v1/search/${jobId}/screenshot?viewport=1&format=webp`);
      t.equal(byFormat.headers.get('content-type'), 'image/webp', 'WebP by format');
      const sized = await get(`/v1/search/${jobId}/screenshot?viewport=1&width=800&scale=2`);
      t.same(pngSize(Buffer.from(await sized.arrayBuffer())), { width: 1600, height: 1536 }, '800 CSS px at scale 2');
    });

    await t.test('answers 422 naming the field, 404, 409 and 410 with a detail', async (t) => {
      const wide = await get(`/v1/search/${jobId}/screenshot?width=5000`);
      t.equal(wide.status, 422, 'a width over the limit');
      t.match(await wide.json(), { detail: /width must be at most 1920/ }, 'the detail names width');
      const scale = await get(`/v1/search/${jobId}/screenshot?scale=9`);
      t.match({ status: scale.status, body: await scale.json() }, { status: 422, body: { detail: /scale/ } }, 'scale');
      const none = await get('/v1/search/000000000000000000000000/screenshot');
      t.equal(none.status, 404, 'an unknown search');
      const slow = (await (await submit(svc.url, key, { keyword: 'slow coffee', depth: 10 })).json()) as {
        job_id: string;
      };
      const running = await get(`/v1/search/${slow.job_id}/screenshot`);
      t.equal(running.status, 409, 'a search still running');
      t.match(await running.json(), { code: 'SERP_JOB_NOT_FINISHED' }, 'says it has not finished');
      // the operator lost the raw page: a variant never rendered before has nothing to render from
      const rawDir = join(data, 'blobs', 'raw');
      for (const f of readdirSync(rawDir, { recursive: true, withFileTypes: true }))
        if (f.isFile()) rmSync(join(f.parentPath, f.name));
      const gone = await get(`/v1/search/${jobId}/screenshot?viewport=1&width=1024`);
      t.equal(gone.status, 410, 'a search whose raw page is gone');
      t.match(await gone.json(), { code: 'SERP_RAW_GONE' }, 'says the page is gone');
    });

    await t.test('pixel positions on a search, afterwards on a stored one, and through compat', async (t) => {
      const { jobId: positioned, result } = await crawl({ keyword: 'tea', depth: 10, pixel_positions: true });
      const organic = result.organic_results as Array<Placed & { position: number }>;
      const meta = (result.search_metadata as { pixel_positions: { viewport: { width: number; height: number } } })
        .pixel_positions;
      t.same(meta.viewport, { width: 1366, height: 768 }, 'the search carries the viewport');
      t.ok(organic.length > 3, `${organic.length} organic results`);
      placedInRankOrder(
        t,
        organic,
        'every result has a rectangle and its distance from the top',
        'tops grow in rank order',
      );
      t.same(
        organic.map((r) => r.above_the_fold),
        organic.map((r) => (r.pixels_from_top as number) < 768),
        'above the fold where the top is on the first screen',
      );
      const later = (await (await get(`/v1/search/${positioned}?output=json&pixel_positions=1`)).json()) as {
        organic_results: Placed[];
      };
      t.same(
        later.organic_results.map((r) => r.rectangle),
        organic.map((r) => r.rectangle),
        'the same positions read again',
      );
      const plain = (await (await get(`/v1/search/${positioned}?output=json&pixel_positions=0`)).json()) as {
        organic_results: Array<Record<string, unknown>>;
      };
      t.equal(plain.organic_results[0]?.rectangle, undefined, 'pixel_positions=0 leaves them out');
      config.requestOptions = { agent: localAgent(svc.url) };
      t.teardown(() => {
        config.requestOptions = {};
      });
      const compat = (await getJson({ engine: 'google', q: 'black tea', api_key: key, pixel_positions: 'true' })) as {
        organic_results: Placed[];
        search_metadata: { pixel_positions?: { viewport: unknown; blocks: unknown[] } };
      };
      t.ok(compat.organic_results.length > 3, 'the compat search answered');
      t.ok(
        compat.organic_results.every((r) => r.rectangle !== null && typeof r.above_the_fold === 'boolean'),
        "the serpapi client's search carries a rectangle on every result",
      );
      t.same(compat.search_metadata.pixel_positions?.viewport, { width: 1366, height: 768 }, 'and the viewport');
    });

    await t.test('a search of two pages: the second page laid out below the first', async (t) => {
      const { result } = await crawl({ keyword: 'oolong tea', depth: 20, pixel_positions: true });
      const organic = result.organic_results as Array<Placed & { position: number }>;
      const meta = (result.search_metadata as { pixel_positions: { pages_laid_out: number } }).pixel_positions;
      t.equal(meta.pages_laid_out, 2, 'both pages were laid out');
      t.ok(organic.length > 12, `${organic.length} organic results over two pages`);
      placedInRankOrder(
        t,
        organic,
        'every result of both pages has a rectangle',
        'tops grow in rank order across the pages',
      );
      const first = parse(readFixtureText(DEFAULT_PAGES[0] as string), { captureAio: true, device: 'desktop' });
      const onFirst = first.kind === 'serp' ? first.serp.organic_results.length : 0;
      const second = organic.slice(onFirst);
      t.ok(onFirst > 0 && second.length > 0, `the second page gave results after the first page's ${onFirst}`);
      t.ok(
        second.every((r) => !r.above_the_fold),
        'none of the second page is above the fold',
      );
    });

    await t.test('the compat archive serves {id}.png', async (t) => {
      const { jobId: id } = await crawl({ keyword: 'green tea', depth: 10 });
      const res = await fetch(`${svc.url}/searches/${id}.png?api_key=${key}&viewport=1`);
      t.equal(res.status, 200, '200');
      t.equal(res.headers.get('content-type'), 'image/png', 'a PNG');
      const bad = await fetch(`${svc.url}/searches/${id}.png?api_key=${key}&width=10`);
      t.equal(bad.status, 400, "a bad width is compat's 400");
      t.match(await bad.json(), { error: /width/ }, 'naming width');
      t.ok(existsSync(join(data, 'blobs', 'render', id)), 'kept under the search');
    });
  },
);
