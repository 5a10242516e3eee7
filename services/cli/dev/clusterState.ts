import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LocalCluster } from './cluster.js';

/**
 * What `cluster up` started, kept in `<dir>/cluster.json` while it runs, so that `cluster down` can stop it from
 * another terminal, or after `up` itself died without stopping its children (kill -9): the pid of `up`, and of every
 * nats-server node and role process it started (docs/distributed.md#a-cluster-on-one-machine).
 */
export interface ClusterState {
  /** the `cluster up` process */
  pid: number;
  startedAt: string;
  children: Array<{ name: string; pid: number; kind: 'nats-server' | 'serp-api' }>;
}

export const clusterStateFile = (dir: string) => join(dir, 'cluster.json');

export const writeClusterState = (dir: string, cluster: Pick<LocalCluster, 'nats' | 'processes'>) => {
  const state: ClusterState = {
    pid: process.pid,
    startedAt: new Date().toISOString(),
    children: [
      ...cluster.nats.nodes.flatMap((n) =>
        n.process?.pid ? [{ name: n.name, pid: n.process.pid, kind: 'nats-server' as const }] : [],
      ),
      ...cluster.processes.flatMap((p) =>
        p.child?.pid ? [{ name: p.name, pid: p.child.pid, kind: 'serp-api' as const }] : [],
      ),
    ],
  };
  // written whole or not at all: `down` never reads half a file
  const file = clusterStateFile(dir);
  writeFileSync(`${file}.tmp`, `${JSON.stringify(state, null, 2)}\n`);
  renameSync(`${file}.tmp`, file);
};

export const readClusterState = (dir: string): ClusterState | undefined => {
  const file = clusterStateFile(dir);
  if (!existsSync(file)) return undefined;
  return JSON.parse(readFileSync(file, 'utf8')) as ClusterState;
};

export const removeClusterState = (dir: string) => rmSync(clusterStateFile(dir), { force: true });

/** the command line of `pid` (Linux /proc), '' when it is gone or cannot be read */
const commandLine = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return '';
  }
};

/**
 * Whether `pid` is still the process the state names: alive, and (where /proc says) running nats-server or serp-api.
 * A pid the system has since given to another program is never signalled.
 */
const stillOurs = (pid: number, kind: ClusterState['children'][number]['kind'] | 'up') => {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const cmd = commandLine(pid);
  if (!existsSync('/proc/self/cmdline')) return true;
  return kind === 'nats-server' ? cmd.includes('nats-server') : cmd.includes('serp-api') || cmd.includes('cluster');
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** waits until none of `pids` is alive, up to `ms`; the ones still alive */
const waitGone = async (pids: number[], ms: number) => {
  const deadline = Date.now() + ms;
  let left = pids;
  for (;;) {
    left = left.filter((pid) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    });
    if (left.length === 0 || Date.now() >= deadline) return left;
    await sleep(100);
  }
};

export interface DownReport {
  /** `up` was running and stopped its children itself */
  upStopped: boolean;
  /** children found still running after that (or with `up` gone), stopped here */
  orphansStopped: string[];
  /** still alive after SIGKILL (should be none) */
  survivors: string[];
}

/**
 * `cluster down`: asks `up` to stop (SIGTERM: it stops its roles, then the nodes) and waits for it; then stops every
 * child the state names that is still running (SIGTERM, SIGKILL after `graceMs`), which is all of them when `up` was
 * killed without a chance to stop them. Removes the state file once nothing it names runs.
 */
export const stopCluster = async (dir: string, state: ClusterState, graceMs: number): Promise<DownReport> => {
  let upStopped = false;
  if (state.pid !== process.pid && stillOurs(state.pid, 'up')) {
    process.kill(state.pid, 'SIGTERM');
    upStopped = (await waitGone([state.pid], graceMs * 2)).length === 0;
  }
  const orphans = state.children.filter((c) => stillOurs(c.pid, c.kind));
  // the roles before the nodes, as `up` stops them: a role that loses NATS first only logs reconnects
  for (const kind of ['serp-api', 'nats-server'] as const) {
    const group = orphans.filter((c) => c.kind === kind);
    for (const c of group) process.kill(c.pid, 'SIGTERM');
    const left = await waitGone(
      group.map((c) => c.pid),
      graceMs,
    );
    for (const pid of left) process.kill(pid, 'SIGKILL');
    await waitGone(left, 5_000);
  }
  const survivors = state.children.filter((c) => stillOurs(c.pid, c.kind)).map((c) => `${c.name} (pid ${c.pid})`);
  if (survivors.length === 0) removeClusterState(dir);
  return { upStopped, orphansStopped: orphans.map((c) => `${c.name} (pid ${c.pid})`), survivors };
};
