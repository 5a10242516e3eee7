import { readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import t from 'tap';
import { type ClusterProcess, startLocalCluster } from '../../services/cli/dev/cluster.js';
import { BACKGROUND_NICE } from '../../services/threads/nice.js';
import { ONE_PAGE, startFakeGoogle } from '../support/fakeGoogle.js';
import { fixturesMissing } from '../support/fixtures.js';
import { natsUnavailable } from '../support/nats.js';
import { cliArgs, pollJob, removeDir, submit, tempDataDir, UNPACED } from '../support/service.js';

/**
 * A cluster api projects its read models on a thread of its own (docs/distributed.md#roles), below its event loop,
 * and that thread failing is survived as the pipeline thread's is (docs/architecture.md#when-a-thread-fails): real
 * nats-server, real `serve --role` processes, a real uncaught error in the thread (SERP_CHAOS_FAULTS=projector:1, the
 * first batch it projects once caught up), and what a user of that api sees.
 */
const unavailable = natsUnavailable() ?? fixturesMissing('serp');

/** a thread's nice value (proc(5): the 19th field of its stat) */
const niceAt = (stat: string) => Number(readFileSync(stat, 'utf8').split(') ').at(-1)!.split(' ')[16]);
const threadNices = (pid: number) =>
  readdirSync(`/proc/${pid}/task`).flatMap((tid) => {
    try {
      return [niceAt(`/proc/${pid}/task/${tid}/stat`)];
    } catch {
      return []; // the thread ended
    }
  });

t.test('a cluster api’s projector thread', { skip: unavailable ?? false, timeout: 300_000 }, async (t) => {
  const google = await startFakeGoogle({ ...ONE_PAGE, latencyMs: 20 });
  const dir = tempDataDir('serp-projector-thread');
  const cluster = await startLocalCluster({
    dir,
    log: () => undefined,
    natsNodes: 1,
    apis: 1,
    crawlers: 1,
    env: { SERP_GOOGLE_ORIGIN: google.origin, SERP_FETCHER: 'http', ...UNPACED, SERP_LOG_LEVEL: 'warn' },
    command: [process.execPath, ...cliArgs],
  });
  t.teardown(async () => {
    await cluster.stop();
    await google.close();
    removeDir(dir);
  });
  // an api that is a dispatcher too (its workers wait on the thread's projected position), whose projector thread
  // dies with the first batch it projects once caught up
  const faulty: ClusterProcess = await cluster.add('api,dispatcher', 'api-faulty', {
    SERP_CHAOS_FAULTS: 'projector:1',
  });
  const admin = { authorization: `Bearer ${cluster.adminToken}`, 'content-type': 'application/json' };
  const restarts = async () => {
    const text = await (await fetch(`${faulty.url}/metrics`, { headers: admin })).text();
    const m = /^serp_thread_restarts_total\{thread="projector"\} (\d+)$/m.exec(text);
    return m ? Number(m[1]) : Number.NaN;
  };

  await t.test('the thread runs below the event loop that answers HTTP', async (t) => {
    if (process.platform !== 'linux') return t.pass('nice values are per thread on Linux only');
    const pid = faulty.child?.pid as number;
    t.equal(niceAt(`/proc/${pid}/stat`), getPriority(), 'the event loop at the host’s priority, as this test’s');
    t.ok(threadNices(pid).includes(BACKGROUND_NICE), `a thread of the api at nice ${BACKGROUND_NICE}: the projector`);
  });

  await t.test('a key minted there is answered once projected, across the thread’s failure', async (t) => {
    // the mint's append is the thread's first batch: it dies after committing it, and the mint's wait for its
    // position goes on with the new thread
    const minted = await fetch(`${faulty.url}/admin/api/keys`, {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({ tier: 'pro' }),
    });
    t.equal(minted.status, 201, 'the mint answers 201');
    const { key, key_id } = (await minted.json()) as { key: string; key_id: string };
    t.equal((await restarts()) >= 1, true, 'serp_thread_restarts_total{thread="projector"} counts the failure');
    t.equal(await restarts(), 1, 'once: the fault was injected into the first thread only');
    const logged = faulty.log
      .filter((line) => line.includes('"thread failed and was restarted"'))
      .map((line) => JSON.parse(line) as { level: number; thread: string; cause: string })
      .find((line) => line.thread === 'projector');
    t.match(logged, { level: 50, cause: /fault injected into the projector thread/ }, 'logged with its cause');

    // read-your-writes through that api: the submit, the job, the key's usage
    const res = await submit(faulty.url, key, { keyword: 'projector thread espresso' });
    t.equal(res.status, 202, 'the submit is accepted');
    const { job_id } = (await res.json()) as { job_id: string };
    const usage = (await (await fetch(`${faulty.url}/v1/usage`, { headers: { 'x-api-key': key } })).json()) as {
      used_this_month: number;
    };
    t.equal(usage.used_this_month, 1, 'the usage read right after the submit counts it');
    const polled = await pollJob(faulty.url, key, job_id, 'json', 120_000);
    t.equal(polled.status, 200, 'the poll answers 200');
    const body = (await polled.json()) as { search_metadata: { status: string }; organic_results: unknown[] };
    t.equal(body.search_metadata.status, 'done', 'the search is done');
    t.ok(body.organic_results.length > 0, `${body.organic_results.length} organic results`);

    // the HTTP thread's read models see the thread's commits at once: a revoked key is refused on its next request
    const revoked = await fetch(`${faulty.url}/admin/api/keys/${key_id}/revoke`, {
      method: 'POST',
      headers: { authorization: admin.authorization },
    });
    t.equal(revoked.status, 200, 'the revoke answers 200');
    const refused = await fetch(`${faulty.url}/v1/usage`, { headers: { 'x-api-key': key } });
    await refused.arrayBuffer();
    t.equal(refused.status, 401, 'the revoked key is refused on its very next request');
    t.equal(faulty.child?.exitCode, null, 'the process is still running');
  });

  await t.test(
    'a projector thread that fails again and again stops its api, saying so, with exit code 70',
    async (t) => {
      // every new thread dies with the first batch it projects once caught up: each mint's append is one
      const doomed = await cluster.add('api', 'api-doomed', { SERP_CHAOS_FAULTS: 'projector:1:each' });
      const child = doomed.child!;
      const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      let answered = 0;
      // until it stops: five failures (a batch of another process's appends may be one of them)
      for (let i = 0; i < 20 && child.exitCode === null; i++) {
        const res = await fetch(`${doomed.url}/admin/api/keys`, {
          method: 'POST',
          headers: admin,
          body: JSON.stringify({ tier: 'free' }),
        }).catch(() => undefined);
        if (res?.status === 201) answered++;
        await res?.arrayBuffer();
      }
      t.ok(answered >= 1, `${answered} mints answered 201, each once a new thread had caught up past it`);
      t.equal(await exit, 70, 'the process exits with 70 (docs/operations.md#exit-codes)');
      t.ok(
        doomed.log.some((line) => /the projector thread failed 5 times within 60 s, last: .*fault injected/.test(line)),
        'its last line says why',
      );
      t.equal(
        doomed.log.filter((line) => line.includes('"thread failed and was restarted"')).length,
        4,
        'the four failures before were each logged and survived',
      );
    },
  );
});
