import t from 'tap';
import { deviceProfile } from '../../services/ports/devices.js';
import { RenderError } from '../../services/render/errors.js';
import { createRenderThread } from '../../services/threads/renderThread.js';
import { chromiumMissing, chromiumPath, watchedOrigin } from '../support/chromium.js';

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47]);

t.test('the renderer on a thread of its own', { skip: chromiumMissing() }, async (t) => {
  const { origin, hits } = await watchedOrigin(t);
  const renderer = createRenderThread({
    executablePath: chromiumPath as string,
    concurrency: 1,
    queue: 1,
    deadlineMs: 20_000,
    nice: 19,
  });

  await t.test('gives back the image and the rectangles, with the page kept offline', async (t) => {
    const html = `<!doctype html><link rel="stylesheet" href="${origin}/style.css"><img src="${origin}/img.png">
      <div data-serp-k1 style="margin-top:900px;height:40px">below</div>`;
    const out = await renderer.render({
      html,
      device: deviceProfile('mobile'),
      image: { format: 'png', fullPage: false },
      measure: ['data-serp-k1'],
    });
    t.ok(Buffer.isBuffer(out.image), 'the image is a Buffer on this side');
    t.same(out.image?.subarray(0, 4), PNG, 'a PNG');
    t.equal(out.image?.readUInt32BE(16), Math.round(412 * 2.625), "as wide as the phone's screen in device pixels");
    t.same(out.viewport, deviceProfile('mobile').viewport, "laid out in the phone's viewport");
    t.ok((out.rectangles['data-serp-k1']?.y ?? 0) > 900, 'the marked element measured in page coordinates');
    t.ok(out.blockedRequests > 0, `the page's ${out.blockedRequests} requests were refused`);
    t.same(hits, [], 'the local server saw no request');
  });

  await t.test("answers a render's failure as the error the HTTP surfaces map", async (t) => {
    const busy = Array.from({ length: 4 }, () =>
      renderer.render({ html: '<p>x</p>'.repeat(2000), device: deviceProfile('desktop') }).then(
        () => 'ok',
        (e: unknown) => e,
      ),
    );
    const outcomes = await Promise.all(busy);
    const refused = outcomes.find((o) => o instanceof RenderError);
    t.ok(refused, 'a render beyond the pool and queue is refused');
    t.match(
      refused,
      { status: 503, code: 'SERP_RENDER_BUSY', headers: { 'Retry-After': '5' } },
      'as busy, with Retry-After',
    );
    t.ok(outcomes.filter((o) => o === 'ok').length >= 2, 'those within the pool and queue rendered');
  });

  await t.test('closes with its browser, and refuses renders after', async (t) => {
    await renderer.close();
    const after = await renderer
      .render({ html: '<p>x</p>', device: deviceProfile('desktop') })
      .catch((e: unknown) => e);
    t.match(after, { status: 503, code: 'SERP_RENDER_UNAVAILABLE' }, 'unavailable once closed');
  });
});
