import { cpSync, mkdtempSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { fixturesMissing } from '../support/fixtures.js';
import { pollJob, removeDir, startStack, submit } from '../support/service.js';

/**
 * A parse that never ends, in a real `serve`: the service's own sources with one file swapped, its parse thread's
 * entry, for one that spins for ever on a page whose query is `HANG`. (No page hangs the parser itself any more:
 * test/parser/tokenizer.test.ts holds it to linear time. These are the service's two guards for the day one would.)
 * The parse deadline ends the thread, replaces it and fails the page as `parse_timeout`, its quota released; and a
 * SIGTERM ends the process within the drain bound with the parse still spinning.
 */

const HANG = 'serp-test-hang';
const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** a copy of the sources whose parse thread spins on HANG's pages (the rest of the service as it is) */
const sourcesWithStuckParser = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'serp-stuck-parse-'));
  for (const part of ['bin', 'contracts', 'data', 'domain', 'parser', 'projections', 'public', 'services']) {
    cpSync(join(repo, part), join(dir, part), { recursive: true });
  }
  for (const file of ['package.json', 'tsconfig.json']) cpSync(join(repo, file), join(dir, file));
  symlinkSync(join(repo, 'node_modules'), join(dir, 'node_modules'));
  const worker = join(dir, 'services', 'threads', 'parseWorker.ts');
  renameSync(worker, join(dir, 'services', 'threads', 'parseWorkerAsShipped.ts'));
  writeFileSync(
    worker,
    `import asShipped from './parseWorkerAsShipped.js';
import type { ParseTask } from './parsePool.js';

export default (task: ParseTask) => {
  if (task.rawHead.includes(${JSON.stringify(HANG)})) {
    Atomics.store(new BigInt64Array(task.started), 0, BigInt(Date.now()));
    for (;;) {}
  }
  return asShipped(task);
};
`,
  );
  return dir;
};

const missing = fixturesMissing();

t.test('a parse that never ends', { skip: missing }, async (t) => {
  const from = sourcesWithStuckParser();
  t.teardown(() => removeDir(from));

  await t.test('is ended at the deadline: the search fails as parse_timeout, the next one parses', async (t) => {
    const stack = await startStack(t, {
      from,
      env: { SERP_PARSE_TIMEOUT_MS: '1500', SERP_PARSE_THREADS: '1' },
      google: { latencyMs: 10 },
    });
    const { key } = await stack.mintKey(['--tier', 'pro']);
    const usage = async () =>
      (
        (await (await fetch(`${stack.svc.url}/v1/usage`, { headers: { 'x-api-key': key } })).json()) as {
          used_this_month: number;
        }
      ).used_this_month;
    const stuck = (await (await submit(stack.svc.url, key, { keyword: HANG })).json()) as { job_id: string };
    const started = Date.now();
    const res = await pollJob(stack.svc.url, key, stuck.job_id, 'json', 60_000);
    const body = (await res.json()) as { search_metadata?: { status: string }; detail?: string; status?: string };
    t.equal(body.search_metadata?.status ?? body.status, 'failed', `failed after ${Date.now() - started} ms`);
    t.match(JSON.stringify(body), /could not be read in time/, 'the detail says why');
    // the dispatcher releases the quota on the final CrawlFailed, a moment after the job reads failed (docs/api.md)
    let used = await usage();
    for (let i = 0; i < 100 && used !== 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      used = await usage();
    }
    t.equal(used, 0, 'its quota was released');
    const next = (await (await submit(stack.svc.url, key, { keyword: 'coffee' })).json()) as { job_id: string };
    const done = (await (await pollJob(stack.svc.url, key, next.job_id, 'json', 60_000)).json()) as {
      search_metadata: { status: string };
      organic_results: unknown[];
    };
    t.equal(done.search_metadata.status, 'done', 'the thread was replaced: the next search parses');
    t.ok(done.organic_results.length > 0);
  });

  await t.test('SIGTERM ends the process within the drain bound, the parse still spinning', async (t) => {
    const stack = await startStack(t, {
      from,
      // no deadline to speak of: only the drain can end this parse (3 s here; 20 s by default)
      env: { SERP_PARSE_TIMEOUT_MS: '600000', SERP_PARSE_THREADS: '1', SERP_DRAIN_TIMEOUT_MS: '3000' },
      teardown: 'kill',
    });
    const { key } = await stack.mintKey(['--tier', 'pro']);
    await submit(stack.svc.url, key, { keyword: HANG });
    // the page was fetched, so its parse is spinning (the fake origin answers at once)
    for (let i = 0; i < 100 && !stack.google.searches().some((r) => r.query.q === HANG); i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    await new Promise((r) => setTimeout(r, 1_000));
    const signalled = Date.now();
    stack.svc.child.kill('SIGTERM');
    const code = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => resolve(-1), 45_000);
      stack.svc.child.once('exit', (c) => {
        clearTimeout(timer);
        resolve(c);
      });
    });
    const seconds = (Date.now() - signalled) / 1000;
    // the crawl worker's drain gives crawls SERP_DRAIN_TIMEOUT_MS, then hands them back; the stuck parse goes with
    // its crawl
    t.ok(code !== -1 && seconds >= 2.5, `exited after the drain bound, not before (${seconds.toFixed(1)} s)`);
    t.ok(code !== -1 && seconds < 15, `exited ${code === -1 ? 'not at all in 45 s' : `in ${seconds.toFixed(1)} s`}`);
    t.equal(code, 0, 'a clean exit');
  });
});
