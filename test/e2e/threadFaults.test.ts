import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { fixturesMissing } from '../support/fixtures.js';
import { pollJob, type Stack, startService, startStack, submit } from '../support/service.js';

/**
 * No single fault stops the process (docs/architecture.md#when-a-thread-fails): a real `serve`, a thread of each kind
 * killed by a real uncaught error inside it (SERP_CHAOS_FAULTS), and what a user sees: the process stays up, the
 * metric counts the restart, the log says why, the work the thread held ends (retried, or failed with a reason) and a
 * search submitted afterwards completes. First, the operators' crash: searches blocked from page 5 beside full ones.
 */

const missing = fixturesMissing();
const adminToken = `adm_${randomBytes(16).toString('hex')}`;
const BLOCKED = 'blocked from page five';

interface Job {
  search_metadata?: { status: string };
  status?: string;
  detail?: string;
  organic_results?: unknown[];
}

/** a search submitted and polled until it ended (anything but 202) */
const searchUntilEnded = async (stack: Stack, key: string, body: Record<string, unknown>) => {
  const res = await submit(stack.svc.url, key, body);
  const accepted = (await res.json()) as { job_id?: string; detail?: string };
  if (!accepted.job_id) return { submitted: res.status, detail: accepted.detail };
  const polled = await pollJob(stack.svc.url, key, accepted.job_id, 'json', 120_000);
  const job = (await polled.json()) as Job;
  return { submitted: res.status, polled: polled.status, status: job.search_metadata?.status ?? job.status, job };
};

const restarts = async (stack: Stack, thread: string): Promise<number> => {
  const res = await fetch(`${stack.svc.url}/metrics`, { headers: { authorization: `Bearer ${adminToken}` } });
  const m = new RegExp(`^serp_thread_restarts_total\\{thread="${thread}"\\} (\\d+)$`, 'm').exec(await res.text());
  return m ? Number(m[1]) : Number.NaN;
};

/** the process is still the one started, and answers */
const stillUp = async (t: Test, stack: Stack) => {
  t.equal(stack.svc.child.exitCode, null, 'the process is still running');
  t.equal((await fetch(`${stack.svc.url}/health`)).status, 200, 'and answers');
};

/** the fault's log line: a JSON line at error level naming the thread and the cause */
const faultLogged = (stack: Stack, thread: string) =>
  stack.svc
    .stdout()
    .split('\n')
    .filter((line) => line.includes('"thread failed and was restarted"'))
    .map((line) => JSON.parse(line) as { level: number; thread: string; cause: string })
    .find((line) => line.thread === thread);

/** a key, minted through the running service's admin API (a CLI process would cost a second of CPU more) */
const mintKey = async (stack: Stack): Promise<string> => {
  const res = await fetch(`${stack.svc.url}/admin/api/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ tier: 'pro' }),
  });
  if (res.status !== 201) throw new Error(`minting a key answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { key: string }).key;
};

const startFaulty = async (t: Test, faults: string, env: Record<string, string> = {}) => {
  const stack = await startStack(t, {
    env: { SERP_ADMIN_TOKEN: adminToken, SERP_CHAOS_FAULTS: faults, ...env },
    google: { latencyMs: 20 },
  });
  return { stack, key: await mintKey(stack) };
};

t.test(
  'searches blocked by a CAPTCHA from page 5, beside full ones, round after round',
  { skip: missing },
  async (t) => {
    const stack = await startStack(t, {
      // each blocked search meets the CAPTCHA four times: its waits (the route's cooldown, the page's back-off) are
      // what the crash is not about, so they are milliseconds here rather than seconds (docs/configuration.md)
      env: {
        SERP_ADMIN_TOKEN: adminToken,
        SERP_ROUTE_COOLDOWN_S: '0.05',
        SERP_ROUTE_COOLDOWN_MAX_S: '0.2',
        SERP_PAGE_RETRY_BACKOFF_MS: '50',
      },
      // page 5 on (start=40) of this query is the CAPTCHA page, for every request: each blocked crawl aborts the pages
      // it has in flight past page 5, some of them as their parse thread posts the CAPTCHA's outcome
      google: { trouble: { kind: 'captcha' }, fromStart: 40, query: BLOCKED },
    });
    const key = await mintKey(stack);
    // the service as it was crashed in round 3 of one run and round 7 of another
    const rounds = 8;
    for (let round = 1; round <= rounds; round++) {
      const [full, blocked] = await Promise.all([
        searchUntilEnded(stack, key, { keyword: `coffee round ${round}`, no_cache: true }),
        searchUntilEnded(stack, key, { keyword: BLOCKED, no_cache: true }),
      ]).catch((err: Error) => {
        // the process went away under the requests: what it said last is the failure
        throw new Error(
          `round ${round}: ${err.message}; the service exited ${stack.svc.child.exitCode}: ${stack.svc.stderr()}`,
        );
      });
      t.equal(full.status, 'done', `round ${round}: the full search is done`);
      t.equal(blocked.status, 'partial', `round ${round}: the blocked one ends partial, with the pages before 5`);
      const found = (o: typeof full) => o.job?.organic_results?.length ?? 0;
      t.ok(
        found(full) > found(blocked) && found(blocked) > 0,
        `round ${round}: ${found(full)}, ${found(blocked)} results`,
      );
      t.equal(stack.svc.child.exitCode, null, `round ${round}: the process is still up`);
    }
    await stillUp(t, stack);
    t.notMatch(stack.svc.stderr(), /pipeline thread failed|Unexpected message/, 'nothing failed on the way');
  },
);

t.test('a thread that dies is logged, counted, restarted, and its work ends', { skip: missing }, async (t) => {
  await t.test('a parse thread: the page is read again, the search is done', async (t) => {
    const { stack, key } = await startFaulty(t, 'parse:3', { SERP_PARSE_THREADS: '1' });
    const first = await searchUntilEnded(stack, key, { keyword: 'coffee', depth: 50 });
    t.equal(first.status, 'done', 'the search whose third page killed its thread is done');
    const next = await searchUntilEnded(stack, key, { keyword: 'tea', depth: 50 });
    t.equal(next.status, 'done', 'the next search is done');
    t.equal(first.job?.organic_results?.length, next.job?.organic_results?.length, 'with every page, as the next');
    t.equal(await restarts(stack, 'parse'), 1, 'serp_thread_restarts_total{thread="parse"} 1');
    t.match(faultLogged(stack, 'parse'), { level: 50, cause: /fault injected into the parse thread/ }, 'logged');
    await stillUp(t, stack);
  });

  await t.test('the hash thread: the crawl attempt fails and is retried, the search is done', async (t) => {
    const { stack, key } = await startFaulty(t, 'hash:1');
    const first = await searchUntilEnded(stack, key, { keyword: 'coffee', depth: 20 });
    t.equal(first.status, 'done', 'the search whose digest died with the thread is done, on its retry');
    t.equal(await restarts(stack, 'hash'), 1, 'serp_thread_restarts_total{thread="hash"} 1');
    t.match(faultLogged(stack, 'hash'), { level: 50, cause: /fault injected into the hash thread/ }, 'logged');
    t.equal((await searchUntilEnded(stack, key, { keyword: 'tea' })).status, 'done', 'the next search is done');
    await stillUp(t, stack);
  });

  await t.test('a writer thread: its appends fail with 503 or are retried, none is lost', async (t) => {
    // the third group of each event store's writer thread: the main thread's (a submit) and the pipeline thread's
    const { stack, key } = await startFaulty(t, 'writer:3');
    const outcomes = [];
    for (let i = 1; i <= 4; i++)
      outcomes.push(await searchUntilEnded(stack, key, { keyword: `coffee ${i}`, depth: 10 }));
    for (const [i, o] of outcomes.entries()) {
      if (o.submitted === 503) {
        t.match(o.detail, /event store/, `search ${i + 1}: refused with 503 and a reason, never acknowledged`);
      } else t.equal(o.status, 'done', `search ${i + 1}: accepted and done`);
    }
    t.ok(
      outcomes.some((o) => o.submitted === 503),
      'the submit the main thread’s writer died with was answered 503',
    );
    t.ok((await restarts(stack, 'writer')) >= 1, 'serp_thread_restarts_total{thread="writer"} counted');
    t.match(faultLogged(stack, 'writer'), { level: 50, cause: /fault injected into the writer thread/ }, 'logged');
    t.equal((await searchUntilEnded(stack, key, { keyword: 'tea' })).status, 'done', 'the next search is done');
    const usage = await fetch(`${stack.svc.url}/v1/usage`, { headers: { 'x-api-key': key } });
    const accepted = outcomes.filter((o) => o.submitted === 202).length + 1;
    t.equal(
      ((await usage.json()) as { used_this_month: number }).used_this_month,
      accepted,
      'the quota counts the accepted searches only: the refused one cost nothing',
    );
    await stillUp(t, stack);
  });

  await t.test('the pipeline thread: a new one rebuilds the queue from the log, the crawl is done', async (t) => {
    const { stack, key } = await startFaulty(t, 'pipeline:1');
    const first = await searchUntilEnded(stack, key, { keyword: 'coffee', depth: 20 });
    t.equal(first.status, 'done', 'the search whose crawl the thread died with is crawled again, and done');
    t.equal(await restarts(stack, 'pipeline'), 1, 'serp_thread_restarts_total{thread="pipeline"} 1');
    t.match(faultLogged(stack, 'pipeline'), { level: 50, cause: /fault injected into the pipeline thread/ }, 'logged');
    t.equal((await searchUntilEnded(stack, key, { keyword: 'tea' })).status, 'done', 'the next search is done');
    const queue = await fetch(`${stack.svc.url}/metrics`, { headers: { authorization: `Bearer ${adminToken}` } });
    t.equal(queue.status, 200, '/metrics answers from the new thread');
    await stillUp(t, stack);
  });
});

/** resolves with the process's exit code (-1: still running after `ms`) */
const exitOf = (stack: Stack, ms = 120_000) =>
  new Promise<number | null>((resolve) => {
    if (stack.svc.child.exitCode !== null) return resolve(stack.svc.child.exitCode);
    const timer = setTimeout(() => resolve(-1), ms);
    stack.svc.child.once('exit', (c) => {
      clearTimeout(timer);
      resolve(c);
    });
  });

/** how many pipeline-thread failures the service logged as restarts */
const pipelineRestartsLogged = (stack: Stack) =>
  stack.svc
    .stdout()
    .split('\n')
    .filter((line) => line.includes('"thread":"pipeline"')).length;

/** a supervisor starts the service again without the fault: the accepted search was in the log, and is crawled */
const doneAfterRestart = async (t: Test, stack: Stack, key: string, jobId: string) => {
  const again = await startService(stack.data, {
    SERP_GOOGLE_ORIGIN: stack.google.origin,
    SERP_ADMIN_TOKEN: adminToken,
  });
  t.teardown(() => again.stop());
  const polled = await pollJob(again.url, key, jobId, 'json', 60_000);
  t.equal(((await polled.json()) as Job).search_metadata?.status, 'done', 'the search is done after the restart');
};

t.test(
  'a pipeline thread that fails again and again stops the process, saying so; its search is done after a restart',
  { skip: missing },
  async (t) => {
    // the crawl kills every pipeline thread that takes it (each new one enqueues it again from the log)
    const { stack, key } = await startFaulty(t, 'pipeline:1:each');
    const res = await submit(stack.svc.url, key, { keyword: 'poison', depth: 10 });
    t.equal(res.status, 202, 'the search is accepted');
    const { job_id: jobId } = (await res.json()) as { job_id: string };
    t.equal(await exitOf(stack), 70, 'exit code 70 (docs/operations.md#exit-codes)');
    t.match(
      stack.svc.stderr(),
      /serp-api: the pipeline thread failed 5 times within 60 s, last: pipeline thread failed: fault injected into the pipeline thread .*; stopping \(exit code 70\)/,
      'the line on stderr says which',
    );
    t.equal(pipelineRestartsLogged(stack), 4, 'the four failures before were restarts, each logged');
    await doneAfterRestart(t, stack, key, jobId);
  },
);

t.test(
  'a pipeline thread whose replacements cannot open the data directory stops the process with 69; once the directory is mended its search is done',
  { skip: missing },
  async (t) => {
    // the first thread dies at its first crawl; by then the read models' file is a directory, so every new thread
    // fails to open its stores (the main thread keeps the file it opened, and answers meanwhile)
    const { stack, key } = await startFaulty(t, 'pipeline:1');
    const readDb = join(stack.data, 'read.db');
    rmSync(readDb);
    mkdirSync(readDb);
    const res = await submit(stack.svc.url, key, { keyword: 'cannot start', depth: 10 });
    t.equal(res.status, 202, 'the search is accepted');
    const { job_id: jobId } = (await res.json()) as { job_id: string };
    t.equal(await exitOf(stack), 69, 'exit code 69 (docs/operations.md#exit-codes)');
    t.match(
      stack.svc.stderr(),
      /serp-api: the pipeline thread could not start 5 times within 60 s: unable to open database file; stopping \(exit code 69\)/,
      'the line on stderr says which, with the cause',
    );
    t.equal(pipelineRestartsLogged(stack), 4, 'the four failures before were restarts, each logged');
    // the operator removes the broken file: the read models are rebuilt from the log, and the search is crawled
    for (const f of [readDb, `${readDb}-wal`, `${readDb}-shm`]) rmSync(f, { recursive: true, force: true });
    await doneAfterRestart(t, stack, key, jobId);
  },
);

t.test(
  'a pipeline thread that fails on a full disk stops the process at once with 74, without a restart',
  { skip: missing },
  async (t) => {
    // the first crawl kills the thread with the error a full disk raises (ENOSPC): another thread would fail the same way
    const { stack, key } = await startFaulty(t, 'pipeline:1:disk-full');
    const res = await submit(stack.svc.url, key, { keyword: 'disk full', depth: 10 });
    t.equal(res.status, 202, 'the search is accepted');
    const { job_id: jobId } = (await res.json()) as { job_id: string };
    t.equal(await exitOf(stack), 74, 'exit code 74 (docs/operations.md#exit-codes)');
    t.match(
      stack.svc.stderr(),
      /serp-api: the pipeline thread failed: the disk is full \(pipeline thread failed: ENOSPC: no space left on device.*\); stopping \(exit code 74\)/,
      'the line on stderr says the disk is full',
    );
    t.notMatch(stack.svc.stdout(), /"thread failed and was restarted"/, 'no restart was tried');
    // space freed
    await doneAfterRestart(t, stack, key, jobId);
  },
);
