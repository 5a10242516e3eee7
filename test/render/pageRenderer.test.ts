import { execSync } from 'node:child_process';
import t from 'tap';
import { deviceProfile } from '../../services/ports/devices.js';
import { RenderError } from '../../services/render/errors.js';
import { createPageRenderer } from '../../services/render/pageRenderer.js';
import { chromiumMissing, chromiumPath, watchedOrigin } from '../support/chromium.js';

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47]);

/** a page that reaches for `origin` every way HTML can without scripts, and with them */
const greedyPage = (origin: string) => `<!doctype html><html><head>
<meta http-equiv="refresh" content="1;url=${origin}/refresh">
<link rel="stylesheet" href="${origin}/style.css"><link rel="preload" as="image" href="${origin}/preload.png">
<link rel="prefetch" href="${origin}/prefetch"><link rel="dns-prefetch" href="//localhost">
<link rel="icon" href="${origin}/favicon.ico">
<style>@import url("${origin}/import.css"); body { background: url("${origin}/bg.png") } @font-face { font-family: x; src: url("${origin}/font.woff2") } p { font-family: x }</style>
<script src="${origin}/script.js"></script><script>fetch("${origin}/fetch"); navigator.sendBeacon("${origin}/beacon")</script>
</head><body><p>hello</p><img src="${origin}/img.png"><img src="http://localhost:${new URL(origin).port}/byname.png">
<iframe src="${origin}/frame"></iframe><video src="${origin}/video.mp4" autoplay></video><object data="${origin}/object"></object>
<a href="${origin}/link" ping="${origin}/ping">link</a><img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=">
<div data-serp-k1 style="margin-top:900px;height:40px">below</div></body></html>`;

t.test('PageRenderer', { skip: chromiumMissing() }, async (t) => {
  const { origin, hits } = await watchedOrigin(t);
  const renderer = createPageRenderer({
    executablePath: chromiumPath as string,
    concurrency: 2,
    queue: 2,
    deadlineMs: 20_000,
    nice: 10,
  });
  t.teardown(() => renderer.close());

  await t.test('renders a page that reaches for a local server without one request reaching it', async (t) => {
    const out = await renderer.render({
      html: greedyPage(origin),
      device: deviceProfile('desktop'),
      image: { format: 'png', fullPage: true },
      measure: ['data-serp-k1'],
    });
    t.same(out.image?.subarray(0, 4), PNG, 'a PNG');
    t.ok(out.blockedRequests > 0, `the page's ${out.blockedRequests} requests were refused`);
    t.same(
      out.rectangles['data-serp-k1'],
      { x: 8, y: out.rectangles['data-serp-k1']?.y, width: 1350, height: 40 },
      'the marked element measured',
    );
    t.ok((out.rectangles['data-serp-k1']?.y ?? 0) > 900, 'measured in page coordinates, below the first screen');
    t.equal(out.pageHeight > 900, true, 'the whole page measured');
    // the refresh would fire after a second: wait past it in a second render
    await new Promise((r) => setTimeout(r, 1500));
    t.same(hits, [], 'the local server saw no request');
  });

  await t.test("lays the page out in the search's device", async (t) => {
    const html =
      '<!doctype html><meta name="viewport" content="width=device-width"><div data-serp-k1 style="width:100%;height:10px"></div>';
    const mobile = await renderer.render({ html, device: deviceProfile('mobile'), measure: ['data-serp-k1'] });
    t.same(mobile.viewport, deviceProfile('mobile').viewport, "the mobile profile's viewport");
    t.equal(mobile.rectangles['data-serp-k1']?.width, 412 - 16, 'the element as wide as the phone');
    t.equal(mobile.image, undefined, 'no image when none is asked for');
    const shot = await renderer.render({
      html,
      device: deviceProfile('mobile'),
      image: { format: 'webp', fullPage: false },
    });
    t.equal(shot.image?.subarray(8, 12).toString('latin1'), 'WEBP', 'a WebP');
    const missing = await renderer.render({ html, device: deviceProfile('desktop'), measure: ['data-serp-k9'] });
    t.same(missing.rectangles, { 'data-serp-k9': null }, 'an element the page lacks has no rectangle');
  });

  await t.test(
    "runs Chromium's threads at nice 10, below the event loop",
    { skip: process.platform !== 'linux' && 'Linux only' },
    async (t) => {
      await renderer.render({
        html: '<p>x</p>'.repeat(5000),
        device: deviceProfile('desktop'),
        image: { format: 'png', fullPage: true },
      });
      // this test's process tree: its Chromium and tsx's esbuild, which is not the renderer's
      const rows = execSync('ps -eL -o pid=,ppid=,ni=,comm=')
        .toString()
        .trim()
        .split('\n')
        .map((l) => l.trim().split(/\s+/));
      const children = new Map<string, Set<string>>();
      for (const [pid, ppid] of rows)
        children.set(ppid as string, (children.get(ppid as string) ?? new Set()).add(pid as string));
      const tree = new Set<string>();
      const pending = [String(process.pid)];
      for (let p = pending.pop(); p !== undefined; p = pending.pop())
        for (const c of children.get(p) ?? []) {
          if (tree.has(c)) continue;
          tree.add(c);
          pending.push(c);
        }
      const chromium = rows.filter(
        ([pid, , , comm]) => tree.has(pid as string) && !/^(esbuild|ps|sh)$/.test(comm as string),
      );
      const lowered = chromium.filter(([, , ni]) => Number(ni) >= 10).length;
      t.ok(chromium.length > 10, `${chromium.length} threads of Chromium`);
      t.ok(lowered / chromium.length >= 0.9, `${lowered} of them at nice 10`);
    },
  );

  await t.test('ends a render past its deadline and goes on with the next', async (t) => {
    const slow = createPageRenderer({
      executablePath: chromiumPath as string,
      concurrency: 1,
      queue: 1,
      deadlineMs: 1,
    });
    t.teardown(() => slow.close());
    const huge = `<table>${'<tr><td>cell</td><td>cell</td></tr>'.repeat(200_000)}</table>`;
    const failed = await slow.render({ html: huge, device: deviceProfile('desktop') }).catch((e: unknown) => e);
    t.ok(failed instanceof RenderError, 'a RenderError');
    t.match(failed, { status: 503, code: 'SERP_RENDER_TIMEOUT' }, 'answered as a timeout');
    const after = await renderer.render({
      html: '<p>ok</p>',
      device: deviceProfile('desktop'),
      image: { format: 'png', fullPage: false },
    });
    t.same(after.image?.subarray(0, 4), PNG, 'the next render works');
  });

  await t.test('a render on the context made ahead for its device sees only its own page', async (t) => {
    const device = deviceProfile('tablet');
    const first = await renderer.render({
      html: `<img src="${origin}/a.png"><img src="${origin}/b.png"><div data-serp-k1 style="height:30px">first</div>`,
      device,
      measure: ['data-serp-k1'],
    });
    t.equal(first.rectangles['data-serp-k1']?.height, 30, 'the first page measured');
    t.equal(first.blockedRequests, 2, "the first page's two requests refused");
    const second = await renderer.render({
      html: `<img src="${origin}/c.png"><div data-serp-k2 style="height:50px">second</div>`,
      device,
      image: { format: 'png', fullPage: false },
      measure: ['data-serp-k1', 'data-serp-k2'],
    });
    t.same(second.rectangles['data-serp-k1'], null, "nothing of the first page is left in the second's");
    t.equal(second.rectangles['data-serp-k2']?.height, 50, 'the second page measured');
    t.equal(second.blockedRequests, 1, 'its own one refused request, counted alone');
    t.equal(
      second.image?.readUInt32BE(16),
      device.viewport.width * device.deviceScaleFactor,
      "drawn at the device's scale",
    );
    t.equal(second.image?.readUInt32BE(20), device.viewport.height * device.deviceScaleFactor, 'its first screen only');
    t.same(hits, [], 'the local server saw no request');
  });

  await t.test('refuses renders beyond its queue with 503 instead of piling them up', async (t) => {
    const page = '<p>x</p>'.repeat(2000);
    const many = Array.from({ length: 8 }, () =>
      renderer.render({ html: page, device: deviceProfile('desktop') }).then(
        () => 'ok',
        (e: unknown) => (e instanceof RenderError ? e.code : String(e)),
      ),
    );
    const outcomes = await Promise.all(many);
    t.ok(outcomes.includes('SERP_RENDER_BUSY'), `some refused as busy: ${outcomes.join(', ')}`);
    t.equal(outcomes.filter((o) => o === 'ok').length >= 4, true, 'those within the pool and queue rendered');
  });
});
