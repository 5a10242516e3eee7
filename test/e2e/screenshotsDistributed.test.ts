import { randomBytes } from 'node:crypto';
import t from 'tap';
import { startLocalCluster } from '../../services/cli/dev/cluster.js';
import { chromiumMissing } from '../support/chromium.js';
import { ONE_PAGE, startFakeGoogle } from '../support/fakeGoogle.js';
import { fixturesMissing } from '../support/fixtures.js';
import { natsUnavailable } from '../support/nats.js';
import { cliArgs, pollJob, removeDir, submit, tempDataDir, UNPACED } from '../support/service.js';

/**
 * Screenshots in distributed mode (docs/screenshots.md#its-own-lane): a real three-node nats-server cluster, a crawler
 * that writes the page to the NATS Object Store and two api processes, each with a renderer of its own reading the
 * page through the blob store's port. The image one api renders is kept in the shared store: the other reads it back.
 */
const unavailable = natsUnavailable() ?? fixturesMissing('serp') ?? chromiumMissing();

t.test('a screenshot in distributed mode', { skip: unavailable ?? false, timeout: 600_000 }, async (t) => {
  const google = await startFakeGoogle({ ...ONE_PAGE });
  const dir = tempDataDir('serp-screenshots-cluster');
  const cluster = await startLocalCluster({
    dir,
    log: () => undefined,
    apis: 2,
    crawlers: 1,
    env: { SERP_GOOGLE_ORIGIN: google.origin, SERP_FETCHER: 'http', ...UNPACED, SERP_LOG_LEVEL: 'warn' },
    command: [process.execPath, ...cliArgs],
  });
  t.teardown(async () => {
    await cluster.stop();
    await google.close();
    removeDir(dir);
  });
  const [A, B] = cluster.apiUrls as [string, string];
  const minted = await fetch(`${A}/admin/api/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${cluster.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ label: `shots-${randomBytes(3).toString('hex')}`, tier: 'pro' }),
  });
  const { key } = (await minted.json()) as { key: string };
  const { job_id } = (await (await submit(A, key, { keyword: 'coffee', depth: 10 })).json()) as { job_id: string };
  t.equal((await pollJob(A, key, job_id)).status, 200, 'the search finished');
  await (await pollJob(B, key, job_id)).arrayBuffer();
  const shot = (api: string) =>
    fetch(`${api}/v1/search/${job_id}/screenshot?viewport=1`, { headers: { 'x-api-key': key } });

  const first = await shot(B);
  t.equal(first.status, 200, 'the second api renders the page the crawler stored in NATS');
  t.equal(first.headers.get('content-type'), 'image/png', 'a PNG');
  t.equal(first.headers.get('x-serp-render'), 'rendered', 'rendered there');
  const image = Buffer.from(await first.arrayBuffer());
  const again = await shot(A);
  t.equal(again.headers.get('x-serp-render'), 'kept', 'the first api reads the kept image from the shared store');
  t.same(Buffer.from(await again.arrayBuffer()), image, 'the same bytes');
  const positions = (await (
    await fetch(`${A}/v1/search/${job_id}?output=json&pixel_positions=1`, {
      headers: { 'x-api-key': key },
    })
  ).json()) as { organic_results: Array<{ rectangle: unknown }> };
  t.ok(
    positions.organic_results.length > 0 && positions.organic_results.every((r) => r.rectangle !== null),
    'pixel positions on every result',
  );
});
