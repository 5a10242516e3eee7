import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { type ClusterState, clusterStateFile } from '../../services/cli/dev/clusterState.js';
import { freePort } from '../../services/cli/dev/natsServer.js';
import { portTaken } from '../../services/threads/portOwner.js';
import { natsUnavailable } from '../support/nats.js';
import { cliArgs, cliResult } from '../support/service.js';

/**
 * `cluster up` leaves nothing behind (docs/distributed.md#a-cluster-on-one-machine): SIGHUP (a closed terminal) stops
 * its children as SIGTERM does, and `cluster down` stops what it started, from its state file, even after `up` itself
 * was killed with no chance to stop them.
 */

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** a first port with the three after it free too: one api, one crawler, the dispatcher and the projector */
const freeRun = async () => {
  for (;;) {
    const first = await freePort();
    const taken = await Promise.all([0, 1, 2, 3].map((i) => portTaken(first + i)));
    if (taken.every((code) => code === undefined)) return first;
  }
};

/** `cluster up` with one api and one crawler, resolved once it says it is up */
const clusterUp = async (t: Test) => {
  const dir = mkdtempSync(join(tmpdir(), 'serp-cluster-down-'));
  const port = await freeRun();
  const up: ChildProcess = spawn(
    process.execPath,
    [...cliArgs, 'cluster', 'up', '--apis', '1', '--crawlers', '1', '--port', String(port), '--dir', dir],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  let err = '';
  up.stdout?.on('data', (c) => {
    out += c;
  });
  up.stderr?.on('data', (c) => {
    err += c;
  });
  t.teardown(() => {
    // whatever a failed assertion left running: the state names it
    if (existsSync(clusterStateFile(dir))) {
      const state = JSON.parse(readFileSync(clusterStateFile(dir), 'utf8')) as ClusterState;
      for (const pid of [state.pid, ...state.children.map((c) => c.pid)]) if (alive(pid)) process.kill(pid, 'SIGKILL');
    }
    up.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`cluster up did not come up in 120 s:\n${err}`)), 120_000);
    up.stdout?.on('data', () => {
      if (out.includes('cluster up:')) {
        clearTimeout(timer);
        resolve();
      }
    });
    up.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`cluster up exited with ${code}:\n${err}`));
    });
  });
  const state = JSON.parse(readFileSync(clusterStateFile(dir), 'utf8')) as ClusterState;
  return { dir, up, state, port };
};

const waitGone = async (pids: number[], ms: number) => {
  const deadline = Date.now() + ms;
  while (pids.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  return pids.filter(alive);
};

t.test('cluster up and down', { skip: natsUnavailable() }, async (t) => {
  await t.test('SIGHUP to cluster up alone stops every node and role it started', async (t) => {
    const { dir, up, state, port } = await clusterUp(t);
    t.equal(state.pid, up.pid, 'the state file names the up process');
    t.same(
      state.children.map((c) => c.kind).sort(),
      ['nats-server', 'nats-server', 'nats-server', 'serp-api', 'serp-api', 'serp-api', 'serp-api'],
      'and its three nodes and four role processes',
    );
    up.kill('SIGHUP');
    const exit = await new Promise<number | null>((r) => up.once('exit', (code) => r(code)));
    t.equal(exit, 0, 'it stops cleanly');
    t.same(
      await waitGone(
        state.children.map((c) => c.pid),
        5_000,
      ),
      [],
      'no child left running',
    );
    t.equal(await portTaken(port), undefined, 'the api port is free again');
    t.notOk(existsSync(clusterStateFile(dir)), 'and the state file is gone');
  });

  await t.test('cluster down stops what up started, even after up was killed -9', async (t) => {
    const { dir, up, state } = await clusterUp(t);
    up.kill('SIGKILL');
    await new Promise((r) => up.once('exit', r));
    const orphans = state.children.map((c) => c.pid);
    t.same(
      orphans.filter((pid) => !alive(pid)),
      [],
      'killing up alone left its children running',
    );
    const down = await cliResult(['cluster', 'down', '--dir', dir]);
    t.equal(down.code, 0, 'cluster down exits 0', { stderr: down.stderr });
    t.match(down.stdout, /stopped, left running: .*api-1 \(pid \d+\)/, 'and names what it stopped');
    t.same(await waitGone(orphans, 5_000), [], 'every node and role is gone');
    t.notOk(existsSync(clusterStateFile(dir)), 'the state file is removed');
    const again = await cliResult(['cluster', 'down', '--dir', dir]);
    t.equal(again.code, 1, 'a second down has nothing to stop');
    t.match(again.stderr, /no cluster started by `cluster up` in .* \(no cluster\.json\)/, 'and says why');
  });
});
