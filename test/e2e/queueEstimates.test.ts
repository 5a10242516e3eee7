import t from 'tap';
import { fixturesMissing } from '../support/fixtures.js';
import { pollJob, startStack, submit } from '../support/service.js';

/**
 * What a submit's 202 says about the queue, through a listening port (docs/fleet.md#lanes-and-fair-share): the
 * embedded service against a fake Google answering each page after 150 ms, two crawl slots a lane. The first job on
 * an idle service has nothing ahead and starts now; another key's first job behind a backlog too (it goes express);
 * a job deep in a backlog is told a wait from the lane's pace once its crawls have ended.
 */
t.test('queue estimates › end to end', { skip: fixturesMissing('serp') }, async (t) => {
  const stack = await startStack(t, {
    google: { latencyMs: 150 },
    env: { SERP_CRAWLER_CONCURRENCY: '2', SERP_ROUTE_MAX_IN_FLIGHT: '4' },
  });
  const url = stack.svc.url;
  const a = (await stack.mintKey(['--tier', 'enterprise'])).key;
  const b = (await stack.mintKey(['--tier', 'enterprise'])).key;
  const json = async (res: Response) => (await res.json()) as Record<string, unknown>;

  await t.test('the first job on an idle service: nothing ahead, starting now', async (t) => {
    const res = await submit(url, a, { keyword: 'first', depth: 10, no_cache: true });
    t.equal(res.status, 202, 'queued');
    t.match(
      await json(res),
      { status: 'queued', queue: { lane: 'live', ahead: 0, estimated_start_s: 0 } },
      'not behind itself: nothing ahead, starting now',
    );
    const bulk = await submit(url, b, { keyword: 'first bulk', depth: 10, no_cache: true, priority: 'bulk' });
    t.match(
      await json(bulk),
      { queue: { lane: 'bulk', ahead: 0, estimated_start_s: 0 } },
      'and the first of the bulk lane, whatever the live lane does',
    );
  });

  // A's backlog of top-100 searches: two crawl at a time, the rest wait
  const backlog: string[] = [];
  for (let i = 0; i < 12; i++) {
    const res = await submit(url, a, { keyword: `backlog ${i}`, no_cache: true });
    backlog.push(String((await json(res)).job_id));
  }

  await t.test("another key's first job behind the backlog: nothing ahead, starting now", async (t) => {
    const res = await submit(url, b, { keyword: 'agent', depth: 10, no_cache: true });
    const body = await json(res);
    t.match(
      body,
      { status: 'queued', queue: { lane: 'live', ahead: 0, estimated_start_s: 0 } },
      'it goes express: nothing ahead, starting now',
    );
    t.equal((await pollJob(url, b, String(body.job_id))).status, 200, 'and it ends');
  });

  await t.test("the backlog's last job, once crawls have ended: a wait from the lane's pace", async (t) => {
    // the first two of the backlog ended: the lane has a pace to go by
    for (const id of backlog.slice(0, 2))
      t.equal((await pollJob(url, a, id)).status, 200, 'a crawl of the backlog ended');
    const polled = await fetch(`${url}/v1/search/${backlog[11]}`, { headers: { 'x-api-key': a } });
    const body = await json(polled);
    if (polled.status === 200) {
      t.pass('the machine crawled the whole backlog before the poll: nothing left to estimate');
      return;
    }
    const queue = body.queue as { ahead: number; estimated_start_s: number | null };
    t.ok(queue.ahead > 0, `jobs ahead of the last: ${JSON.stringify(queue)}`);
    t.ok(
      typeof queue.estimated_start_s === 'number' && queue.estimated_start_s > 0,
      `told a wait in seconds, not null nor now: ${JSON.stringify(queue)}`,
    );
  });
});
