import { spawnSync } from 'node:child_process';
import { getPriority } from 'node:os';
import t from 'tap';

/**
 * lowerHelperThreads, in a process of its own (it lowers the threads of the process that calls it): every thread that
 * exists then but the caller goes to BACKGROUND_NICE, and a thread started afterwards keeps the nice value of the
 * thread that starts it (the event store's writer thread: submits wait on it, so it must stay at the loop's).
 */
const child = `
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
const { lowerHelperThreads, BACKGROUND_NICE } = await import(${JSON.stringify(new URL('../../services/threads/nice.ts', import.meta.url).pathname)});
const niceOf = (tid) => { const s = readFileSync('/proc/self/task/' + tid + '/stat', 'utf8'); return Number(s.slice(s.lastIndexOf(')') + 2).split(' ')[16]); };
const self = Number(readlinkSync('/proc/thread-self').split('/').pop());
const before = readdirSync('/proc/self/task').map(Number);
const lowered = lowerHelperThreads();
const worker = new Worker("import { readlinkSync } from 'node:fs'; import { parentPort } from 'node:worker_threads'; parentPort.postMessage(Number(readlinkSync('/proc/thread-self').split('/').pop())); parentPort.once('message', () => process.exit(0));", { eval: true });
const later = await new Promise((r) => worker.once('message', r));
const out = { self, lowered, background: BACKGROUND_NICE, before: before.map((tid) => [tid, niceOf(tid)]), later: niceOf(later), selfNice: niceOf(self) };
worker.postMessage('done');
process.stdout.write(JSON.stringify(out));
`;

t.test(
  'lowerHelperThreads: every thread but the caller to the background nice; threads started later keep the caller’s',
  { skip: process.platform !== 'linux' ? 'nice values are per thread on Linux only' : false },
  async (t) => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', child], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    t.equal(run.status, 0, run.stderr);
    const out = JSON.parse(run.stdout) as {
      self: number;
      lowered: number;
      background: number;
      before: [number, number][];
      later: number;
      selfNice: number;
    };
    const helpers = out.before.filter(([tid]) => tid !== out.self);
    t.ok(helpers.length >= 4, `V8's platform workers at least (${helpers.length} threads besides the caller)`);
    t.equal(out.lowered, helpers.length, 'each of them lowered');
    t.same(
      helpers.map(([, nice]) => nice),
      helpers.map(() => out.background),
      `all at nice ${out.background}`,
    );
    // the child starts at this process's nice (0, or 5 under `nice -n 5`)
    const start = getPriority();
    t.equal(out.selfNice, start, 'the caller (the event loop) keeps its priority');
    t.equal(out.later, start, 'a thread the caller starts afterwards keeps the caller’s priority');
  },
);
