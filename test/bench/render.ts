/**
 * Rendering stored pages (docs/screenshots.md#what-it-costs), in three parts:
 *
 * 1. **Positions.** Every fixture SERP with organic results is marked and rendered with its device (the fixture's
 *    folder or name says mobile or tablet, else desktop): how many render with a rectangle on every organic result,
 *    why the others do not, and on how many of those the rectangles' tops grow in the parser's rank order.
 * 2. **Time.** For `--pages` of them through the page views the api uses (an fs blob store): a first-screen render
 *    (cold), the same request again (kept: read from the blob store) and, as the honest baseline of what every render
 *    must do anyway, the read of the page's raw HTML from the same store; sides alternated page by page. Image sizes.
 * 3. **Neighbours.** A built service (`serp-api serve`, the fake Google serving one page a search) with
 *    SERP_RENDER_CONCURRENCY=4: a live one-page search's time (submit with `async: false`, `no_cache`) and `/v1` read
 *    p99 (a finished result, 200 reads back to back) with nothing else running, against the same with four
 *    screenshot renders kept in flight (each of another width, so each is a real render); rounds alternated.
 *
 * `node --import tsx test/bench/render.ts [--pages 30] [--rounds 4] [--searches 3] [--no-build]`
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assembleRawHtml, parseRaw, positionMarks } from '../../parser/index.js';
import type { SearchResultDoc } from '../../projections/searchResults/searchResults.js';
import { createFsBlobStore } from '../../services/adapters/blobStore/fs.js';
import { deviceProfile } from '../../services/ports/devices.js';
import { createPageRenderer } from '../../services/render/pageRenderer.js';
import { createPageViews } from '../../services/render/pageViews.js';
import { withPixelPositions } from '../../services/render/withPositions.js';
import { chromiumPath } from '../support/chromium.js';
import { ONE_PAGE, startFakeGoogle } from '../support/fakeGoogle.js';
import { listSerpPages, readFixtureText } from '../support/fixtures.js';
import { cli, pollJob, removeDir, startService, submit, tempDataDir } from '../support/service.js';
import { alternate, type Figure, machineNote, numberArg, printRatio, quantile } from './compare.js';

const pagesArg = numberArg('pages', 30);
const rounds = numberArg('rounds', 4);
const searchesPerRound = numberArg('searches', 3);
const noBuild = process.argv.includes('--no-build');
/** `--only neighbours`: part 3 alone */
const only = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : undefined;
if (!chromiumPath) throw new Error('no Chromium: the render bench needs one (SERP_CHROMIUM_PATH)');

const median = (xs: number[]) => quantile(xs, 0.5);
const fig = (xs: number[], f = 0): Figure => ({ value: median(xs), failures: f });
const ms = (x: number) => `${x.toFixed(1)} ms`;
const kb = (x: number) => `${(x / 1024).toFixed(0)} kB`;
const deviceOf = (path: string) =>
  /mobile|iphone|android/i.test(path) ? 'mobile' : /tablet/i.test(path) ? 'tablet' : 'desktop';

console.log(machineNote());

// 1. positions on every fixture page
if (only !== 'neighbours') {
  const renderer = createPageRenderer({
    executablePath: chromiumPath,
    concurrency: 2,
    queue: 1000,
    deadlineMs: 30_000,
  });
  const why: Record<string, string[]> = {};
  const because = (reason: string, path: string) => {
    why[reason] ??= [];
    why[reason].push(path);
  };
  const renderable: Array<{ path: string; html: string; device: 'desktop' | 'mobile' | 'tablet' }> = [];
  let monotonic = 0;
  let rendered = 0;
  const pages = listSerpPages();
  await Promise.all(
    pages.map(async (path) => {
      const page = readFixtureText(path);
      const device = deviceOf(path);
      const { outcome, marks, html } = positionMarks(page, { captureAio: true, device });
      if (outcome.kind !== 'serp') return because(`not a results page (${outcome.kind})`, path);
      if (outcome.serp.organic_results.length === 0) return because('no organic results to place', path);
      const organic = marks.filter((m) => m.target.kind === 'organic');
      const out = await renderer
        .render({ html, device: deviceProfile(device), measure: organic.map((m) => m.attribute) })
        .catch((err: unknown) => err as Error);
      if (out instanceof Error) return because(`the render failed: ${out.message.split('\n')[0]}`, path);
      const rects = organic.map((m) => out.rectangles[m.attribute]);
      if (rects.some((r) => !r)) return because('a result laid out with no box (hidden with scripts off)', path);
      rendered += 1;
      renderable.push({ path, html: page, device });
      const tops = rects.map((r) => r?.y ?? 0);
      if (tops.every((y, i) => i === 0 || y >= (tops[i - 1] as number))) monotonic += 1;
      else because('rendered, tops not in rank order', path);
    }),
  );
  console.log(
    `\n1. positions: ${pages.length} fixture pages, ${rendered} render with a rectangle on every organic result`,
  );
  console.log(
    `   monotonic in rank order: ${monotonic} of ${rendered} (${((100 * monotonic) / Math.max(1, rendered)).toFixed(1)} %)`,
  );
  for (const [reason, paths] of Object.entries(why)) {
    console.log(`   ${paths.length} ${reason}${paths.length <= 3 ? `: ${paths.join(', ')}` : ` (e.g. ${paths[0]})`}`);
  }

  // 1b. searches of three pages: the renderable pages of one device, three at a time in name order, laid out as the
  // page views do (each later page's results stacked below the page before's); monotonic across the whole search
  const multiDir = mkdtempSync(join(tmpdir(), 'render-bench-pages-'));
  const multiStore = createFsBlobStore(join(multiDir, 'blobs'));
  const multiViews = createPageViews({ blobStore: multiStore, renderer });
  const searches: Array<typeof renderable> = [];
  for (const device of ['desktop', 'mobile', 'tablet'] as const) {
    const own = renderable.filter((p) => p.device === device).sort((a, b) => a.path.localeCompare(b.path));
    for (let i = 0; i + 3 <= own.length; i += 3) searches.push(own.slice(i, i + 3));
  }
  let placedAll = 0;
  let monotonicSearches = 0;
  const multiWhy: string[] = [];
  await Promise.all(
    searches.map(async (search, n) => {
      const device = search[0]?.device ?? 'desktop';
      const raw = assembleRawHtml(search.map((p, i) => ({ start: 10 * i, url: '', fetchedAt: '', html: p.html })));
      const parsed = parseRaw(raw, { captureAio: true, device });
      if (parsed.kind !== 'serp') return multiWhy.push(`not a results page: ${search[0]?.path}`);
      const doc = { rawHtmlRef: await multiStore.put(`raw/pages${n}.html`, raw) } as SearchResultDoc;
      const positions = await multiViews.positions(`pages${n}`, doc, device).catch((err: unknown) => err as Error);
      if (positions instanceof Error) return multiWhy.push(`a render failed: ${positions.message.split('\n')[0]}`);
      const organic = withPixelPositions(parsed.serp, positions).organic_results as unknown as Array<{
        pixels_from_top: number | null;
      }>;
      if (organic.some((r) => r.pixels_from_top === null))
        return multiWhy.push(`a result with no rectangle: ${search.map((p) => p.path).join(' + ')}`);
      placedAll += 1;
      const tops = organic.map((r) => r.pixels_from_top as number);
      if (tops.every((y, i) => i === 0 || y >= (tops[i - 1] as number))) monotonicSearches += 1;
      else multiWhy.push(`tops not in rank order: ${search.map((p) => p.path).join(' + ')}`);
      return undefined;
    }),
  );
  await renderer.close();
  rmSync(multiDir, { recursive: true, force: true });
  console.log(
    `   searches of three pages (${searches.length}, one render a page): ${placedAll} with a rectangle on every organic result, monotonic across pages on ${monotonicSearches} of ${placedAll} (${((100 * monotonicSearches) / Math.max(1, placedAll)).toFixed(1)} %)`,
  );
  for (const reason of multiWhy) console.log(`   ${reason}`);

  // 2. a first screen: cold render, kept, and the raw read every render starts with
  const dir = mkdtempSync(join(tmpdir(), 'render-bench-'));
  const blobStore = createFsBlobStore(join(dir, 'blobs'));
  const timedRenderer = createPageRenderer({
    executablePath: chromiumPath,
    concurrency: 1,
    queue: 10,
    deadlineMs: 30_000,
  });
  const views = createPageViews({ blobStore, renderer: timedRenderer });
  const sample = renderable.sort((a, b) => a.path.localeCompare(b.path)).slice(0, pagesArg);
  const docs = await Promise.all(
    sample.map(async (p, i) => {
      const ref = await blobStore.put(`raw/bench/${i}.html`, p.html);
      return {
        jobId: `bench${String(i).padStart(4, '0')}`,
        doc: { rawHtmlRef: ref } as SearchResultDoc,
        device: p.device,
      };
    }),
  );
  const cold: number[] = [];
  const kept: number[] = [];
  const rawRead: number[] = [];
  const sizes: { png: number[] } = { png: [] };
  let failures = 0;
  const timed = async (fn: () => Promise<unknown>) => {
    const t0 = performance.now();
    await fn();
    return performance.now() - t0;
  };
  // one warm-up render: Chromium's start is paid once per process, not per render
  await views.screenshot('warmup', docs[0]!.doc, docs[0]!.device, { format: 'png', viewport: true });
  await alternate(docs.length, {
    render: async (round) => {
      const d = docs[round]!;
      const t0 = performance.now();
      const shot = await views
        .screenshot(d.jobId, d.doc, d.device, { format: 'png', viewport: true })
        .catch(() => undefined);
      if (!shot || shot.cached) failures += 1;
      else {
        cold.push(performance.now() - t0);
        sizes.png.push(shot.image.length);
      }
      kept.push(await timed(() => views.screenshot(d.jobId, d.doc, d.device, { format: 'png', viewport: true })));
    },
    rawRead: async (round) => {
      rawRead.push(await timed(() => blobStore.get(docs[round]!.doc.rawHtmlRef.key)));
    },
  });
  console.log(`\n2. a first screen, ${docs.length} pages (PNG, the page's device)`);
  console.log(`   render (cold): median ${ms(median(cold))}, p90 ${ms(quantile(cold, 0.9))}; failures ${failures}`);
  console.log(`   repeat (kept):  median ${ms(median(kept))}, p90 ${ms(quantile(kept, 0.9))}`);
  console.log(`   raw HTML read:  median ${ms(median(rawRead))} (what every render reads first)`);
  console.log(`   PNG size: median ${kb(median(sizes.png))}, largest ${kb(Math.max(...sizes.png))}`);
  printRatio('   render / raw read', fig(cold, failures), fig(rawRead), ['render', 'raw read']);
  printRatio('   render / repeat (how many times cheaper the repeat)', fig(cold, failures), fig(kept), [
    'render',
    'repeat',
  ]);
  await timedRenderer.close();
  rmSync(dir, { recursive: true, force: true });
}

// 3. a live search and reads beside four renders
if (!noBuild) {
  execFileSync('npm', ['run', 'build'], { stdio: 'inherit' });
  // the service then starts from the build, as `npm start` runs it (test/support/service.ts)
  process.env.SERP_TEST_BUILT = '1';
}
const google = await startFakeGoogle({ ...ONE_PAGE });
const data = tempDataDir('render-bench');
const svc = await startService(data, {
  SERP_GOOGLE_ORIGIN: google.origin,
  SERP_RENDER_CONCURRENCY: '4',
  SERP_LOG_LEVEL: 'error',
});
try {
  const { key } = JSON.parse(await cli(['keys', 'create', '--tier', 'pro', '--json', '--data', data])) as {
    key: string;
  };
  const { job_id: stored } = (await (await submit(svc.url, key, { keyword: 'coffee', depth: 10 })).json()) as {
    job_id: string;
  };
  await (await pollJob(svc.url, key, stored)).arrayBuffer();
  let width = 320;
  let renderFailures = 0;
  let rendersDone = 0;
  /** why renders failed, by status and code: a render past its deadline is a 503 SERP_RENDER_TIMEOUT */
  const failedAs: Record<string, number> = {};
  const loadRenders = (n: number) => {
    let on = true;
    const one = async (): Promise<void> => {
      while (on) {
        width = width >= 1920 ? 320 : width + 1;
        const res = await fetch(`${svc.url}/v1/search/${stored}/screenshot?viewport=1&width=${width}`, {
          headers: { 'x-api-key': key },
        });
        const body = Buffer.from(await res.arrayBuffer());
        if (res.status === 200) rendersDone += 1;
        else {
          renderFailures += 1;
          let code = '';
          try {
            code = (JSON.parse(body.toString('utf8')) as { code?: string }).code ?? '';
          } catch {
            // not a problem document: the status says enough
          }
          failedAs[`${res.status} ${code}`] = (failedAs[`${res.status} ${code}`] ?? 0) + 1;
        }
      }
    };
    const running = Array.from({ length: n }, one);
    return async () => {
      on = false;
      await Promise.all(running);
    };
  };
  const live = async () => {
    const out: number[] = [];
    let f = 0;
    for (let i = 0; i < searchesPerRound; i++) {
      const t0 = performance.now();
      const res = await fetch(`${svc.url}/v1/search?output=json`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({ keyword: `live ${i} ${Math.random()}`, depth: 10, no_cache: true, async: false }),
      });
      await res.arrayBuffer();
      if (res.status === 200) out.push(performance.now() - t0);
      else f += 1;
    }
    const reads: number[] = [];
    for (let i = 0; i < 200; i++) {
      const t0 = performance.now();
      const res = await fetch(`${svc.url}/v1/search/${stored}?output=json`, { headers: { 'x-api-key': key } });
      await res.arrayBuffer();
      if (res.status === 200) reads.push(performance.now() - t0);
      else f += 1;
    }
    return { searches: out, reads, failures: f };
  };
  const results = await alternate(rounds, {
    idle: () => live(),
    renders: async () => {
      const stop = loadRenders(4);
      // the renders are under way before the search starts
      await new Promise((r) => setTimeout(r, 1000));
      const r = await live();
      await stop();
      return r;
    },
  });
  const all = (side: typeof results.idle) => ({
    searches: side.flatMap((r) => r.searches),
    reads: side.flatMap((r) => r.reads),
    failures: side.reduce((n, r) => n + r.failures, 0),
  });
  const idle = all(results.idle);
  const loaded = all(results.renders);
  console.log(`\n3. beside four renders (${rounds} rounds, ${searchesPerRound} live searches and 200 reads each)`);
  const why = Object.entries(failedAs).map(([k, n]) => `${n}× ${k}`);
  console.log(
    `   renders done while measured: ${rendersDone}, failed ${renderFailures}${why.length ? ` (${why.join(', ')})` : ''}`,
  );
  console.log(
    `   live one-page search: idle median ${ms(median(idle.searches))}, beside renders ${ms(median(loaded.searches))}`,
  );
  console.log(
    `   read p99: idle ${ms(quantile(idle.reads, 0.99))}, beside renders ${ms(quantile(loaded.reads, 0.99))}`,
  );
  printRatio(
    '   live search, renders / idle (goal ≤ 1.2×)',
    fig(loaded.searches, loaded.failures),
    fig(idle.searches, idle.failures),
    ['renders', 'idle'],
  );
  printRatio(
    '   read p99, renders / idle (goal ≤ 2×)',
    { value: quantile(loaded.reads, 0.99), failures: loaded.failures },
    { value: quantile(idle.reads, 0.99), failures: idle.failures },
    ['renders', 'idle'],
  );
} finally {
  await svc.stop();
  await google.close();
  removeDir(data);
}
