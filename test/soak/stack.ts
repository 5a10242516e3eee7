import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createJetStreamEventStore } from '../../services/adapters/eventStore/jetstream.js';
import { createSqliteEventStore } from '../../services/adapters/eventStore/sqlite.js';
import { type ClusterProcess, type LocalCluster, startLocalCluster } from '../../services/cli/dev/cluster.js';
import type { EventStore } from '../../services/ports/eventStore.js';
import { ALLOCATOR_ENV } from '../../services/runtime/allocator.js';
import { type FakeGoogle, startFakeGoogle } from '../support/fakeGoogle.js';
import { natsConnect } from '../support/nats.js';
import { type ProxyFleet, startProxies } from '../support/proxies.js';
import { cliEntry, type RunningService, removeDir, startService, tempDataDir, UNPACED } from '../support/service.js';
import { type Receiver, startReceiver } from '../support/webhookReceiver.js';

/**
 * What the soak runs against (docs/operations.md#the-soak): the fake Google behind local forward proxies, webhook
 * receivers, and the real service: one `serve` (embedded) or a cluster of three nats-server nodes and processes of
 * `serve --role …` (`serp-api cluster up`'s tooling). Each service process carries the event-loop probe
 * (loopProbe.mjs). The stack restarts what the soak kills on purpose and records every other exit.
 */

export const PROBE = fileURLToPath(new URL('./loopProbe.mjs', import.meta.url));
export const ADMIN_TOKEN = 'soak-admin-token-0123456789abcdef';

/**
 * the settings every soak runs the service with (short rests and waits, so a blocked search ends in seconds), and the
 * C allocator's settings the image runs every process with (docs/operations.md#memory)
 */
export const soakEnv = (google: FakeGoogle, proxies: ProxyFleet, probeDir: string): NodeJS.ProcessEnv => ({
  ...ALLOCATOR_ENV,
  SERP_GOOGLE_ORIGIN: google.origin,
  SERP_FETCHER: 'http',
  SERP_PROXY_URLS: proxies.urls.join(','),
  ...UNPACED,
  SERP_NO_ROUTE_WAIT_S: '10',
  SERP_CRAWLER_CONCURRENCY: '4',
  SERP_ADMIN_TOKEN: ADMIN_TOKEN,
  SERP_WEBHOOK_ALLOW_HTTP: '1',
  SERP_WEBHOOK_ALLOW_PRIVATE: '1',
  SERP_WEBHOOK_BACKOFF_MS: '200',
  SERP_WEBHOOK_TIMEOUT_MS: '1000',
  SERP_MONITOR_TICK_MS: '500',
  SERP_MONITOR_SPREAD_MAX_S: '20',
  SERP_LOG_LEVEL: 'warn',
  SOAK_PROBE_DIR: probeDir,
});

/** the settings bound what a job may take (the job bound of the invariants is made from them) */
export const JOB_LIMITS = {
  /** services/crawler/crawl.ts: a page's attempts and each attempt's deadline */
  attemptsPerPage: 4,
  pageTimeoutS: 30,
  noRouteWaitS: 10,
  cooldownMaxS: Number(UNPACED.SERP_ROUTE_COOLDOWN_MAX_S),
};

export interface UnplannedExit {
  name: string;
  at: number;
  code: number | null;
  signal: string | null;
  /** the last lines it printed */
  tail: string;
}

export interface SoakProcess {
  name: string;
  roles: string;
  pid: number;
  /** it answers the API (its main thread is an HTTP thread) */
  http: boolean;
  /** where it answers, when it does */
  url?: string;
}

export interface SoakStack {
  mode: 'embedded' | 'cluster';
  /** where the API answers now (an embedded service restarted after a crash listens elsewhere) */
  apiUrls(): string[];
  google: FakeGoogle;
  proxies: ProxyFleet;
  receivers: Receiver[];
  /** the log, read beside the service (SQLite's file, or JetStream) */
  events: EventStore;
  probeDir: string;
  /** the service's processes alive now */
  processes(): SoakProcess[];
  /** names of the processes killed on purpose (their RSS restarts from nothing) */
  restarted: Set<string>;
  unplanned: UnplannedExit[];
  /** kill -9 a process of `role` (`target` picks among several) and start it again after `downMs`; its name */
  killRole(role: 'crawler' | 'dispatcher' | 'api', target: number, downMs: number): Promise<string>;
  /** kill -9 a NATS node and start it again after `downMs`; its name */
  restartNats(target: number, downMs: number): Promise<string>;
  /** what the service printed lately (every process), for a failed invariant's evidence */
  logTail(lines?: number): string;
  stop(): Promise<void>;
}

const root = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Whether dist/ holds a build at least as new as every source (then the soak runs it, as `npm start` would), else the
 * sources through tsx, never a stale build.
 */
export const freshBuild = (): boolean => {
  const main = join(root, 'dist', 'services', 'cli', 'main.js');
  if (!existsSync(main)) return false;
  const built = statSync(main).mtimeMs;
  const newest = (dir: string): number => {
    let m = 0;
    for (const entry of readdirSafe(dir)) {
      const p = join(dir, entry.name);
      if (entry.isDirectory()) m = Math.max(m, newest(p));
      else if (entry.name.endsWith('.ts')) m = Math.max(m, statSync(p).mtimeMs);
    }
    return m;
  };
  return ['services', 'contracts', 'projections', 'parser', 'domain'].every((d) => newest(join(root, d)) <= built);
};
const readdirSafe = (dir: string) => {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
};

export const startSoakStack = async (options: {
  cluster: boolean;
  proxies: number;
  receivers: number;
  log?: (line: string) => void;
}): Promise<SoakStack> => {
  const google = await startFakeGoogle({ placement: {} });
  const proxies = await startProxies(options.proxies);
  const receivers = await Promise.all(Array.from({ length: options.receivers }, () => startReceiver()));
  const dir = tempDataDir(options.cluster ? 'serp-soak-cluster' : 'serp-soak');
  const probeDir = join(dir, 'probe');
  mkdirSync(probeDir, { recursive: true });
  const env = soakEnv(google, proxies, probeDir);
  const unplanned: UnplannedExit[] = [];
  const restarted = new Set<string>();
  let stopping = false;
  const closeSupport = async () => {
    await google.close();
    await proxies.close();
    for (const r of receivers) await r.close();
  };

  if (!options.cluster) {
    const data = join(dir, 'data');
    mkdirSync(data);
    const nodeArgs = `--import ${PROBE}`;
    let svc: RunningService = await startService(data, { ...env, SERP_TEST_NODE_ARGS: nodeArgs });
    const watch = (s: RunningService) => {
      s.child.once('exit', (code, signal) => {
        if (stopping) return;
        unplanned.push({ name: 'serve', at: Date.now(), code, signal, tail: s.stderr().slice(-4000) });
        restarted.add('serve');
        // the soak goes on against a new start on the same data (what a supervisor would do), and says so
        void startService(data, { ...env, SERP_TEST_NODE_ARGS: nodeArgs }).then(
          (next) => {
            svc = next;
            watch(next);
          },
          (err) => options.log?.(`serve did not start again: ${String(err)}`),
        );
      });
    };
    watch(svc);
    const events = createSqliteEventStore({ path: join(data, 'events.db') });
    return {
      mode: 'embedded',
      apiUrls: () => [svc.url],
      google,
      proxies,
      receivers,
      events,
      probeDir,
      processes: () =>
        svc.child.pid !== undefined && svc.child.exitCode === null
          ? [{ name: 'serve', roles: 'all', pid: svc.child.pid, http: true, url: svc.url }]
          : [],
      restarted,
      unplanned,
      killRole: async () => {
        throw new Error('process faults need --cluster');
      },
      restartNats: async () => {
        throw new Error('process faults need --cluster');
      },
      logTail: (lines = 40) => [svc.stderr(), svc.stdout()].join('\n').split('\n').slice(-lines).join('\n'),
      async stop() {
        stopping = true;
        await events.close();
        await svc.stop();
        await closeSupport();
        removeDir(dir);
      },
    };
  }

  const cluster: LocalCluster = await startLocalCluster({
    dir: join(dir, 'cluster'),
    apis: 2,
    crawlers: 2,
    env: { ...env, SERP_QUEUE_ACK_WAIT_MS: '5000' },
    command: [process.execPath, '--import', PROBE, ...cliEntry()],
    log: options.log,
  });
  const events = await createJetStreamEventStore({ nc: await natsConnect(cluster.nats.urls), ownsConnection: true });
  /** processes and nodes taken down on purpose right now: their exit is planned */
  const planned = new Set<string>();
  const seen = new WeakSet<object>();
  const watchTimer = setInterval(() => {
    if (stopping) return;
    for (const p of cluster.processes) {
      const c = p.child;
      if (!c || seen.has(c) || planned.has(p.name)) continue;
      if (c.exitCode === null && c.signalCode === null) continue;
      seen.add(c);
      unplanned.push({
        name: p.name,
        at: Date.now(),
        code: c.exitCode,
        signal: c.signalCode,
        tail: p.log.slice(-30).join('\n'),
      });
      restarted.add(p.name);
      // started again, as an orchestrator would, so the soak measures the rest of the run
      void cluster.restart(p).catch((err) => options.log?.(`${p.name} did not start again: ${String(err)}`));
    }
    cluster.nats.nodes.forEach((n) => {
      const c = n.process;
      if (!c || seen.has(c) || planned.has(n.name)) return;
      if (c.exitCode === null && c.signalCode === null) return;
      seen.add(c);
      unplanned.push({ name: n.name, at: Date.now(), code: c.exitCode, signal: c.signalCode, tail: '' });
    });
  }, 500);

  const byRole = (role: string) => cluster.processes.filter((p) => p.roles === role);
  return {
    mode: 'cluster',
    apiUrls: () => cluster.apiUrls,
    google,
    proxies,
    receivers,
    events,
    probeDir,
    processes: () =>
      cluster.processes.flatMap((p: ClusterProcess) =>
        p.child?.pid !== undefined && p.child.exitCode === null && p.child.signalCode === null
          ? [{ name: p.name, roles: p.roles, pid: p.child.pid, http: p.roles === 'api', url: p.url }]
          : [],
      ),
    restarted,
    unplanned,
    async killRole(role, target, downMs) {
      const all = byRole(role);
      const p = all[target % all.length]!;
      planned.add(p.name);
      restarted.add(p.name);
      try {
        await cluster.kill(p, 'SIGKILL');
        await new Promise((r) => setTimeout(r, downMs));
        await cluster.restart(p);
      } finally {
        planned.delete(p.name);
      }
      return p.name;
    },
    async restartNats(target, downMs) {
      const i = target % cluster.nats.nodes.length;
      const name = cluster.nats.nodes[i]!.name;
      planned.add(name);
      try {
        await cluster.nats.stopNode(i, 'SIGKILL');
        await new Promise((r) => setTimeout(r, downMs));
        await cluster.nats.startNode(i);
      } finally {
        planned.delete(name);
      }
      return name;
    },
    logTail: (lines = 40) =>
      cluster.processes
        .map((p) => `[${p.name}]\n${p.log.slice(-Math.ceil(lines / cluster.processes.length)).join('\n')}`)
        .join('\n'),
    async stop() {
      stopping = true;
      clearInterval(watchTimer);
      await events.close();
      await cluster.stop();
      await closeSupport();
      removeDir(dir);
    },
  };
};

/** resident set of a process in bytes (/proc/<pid>/status VmRSS), or undefined once it is gone */
export const rssOf = (pid: number): number | undefined => memoryOf(pid)?.rss;

/** VmRSS and its anonymous part (heaps, malloc) and file-backed part (mapped files), in bytes */
export const memoryOf = (pid: number): { rss: number; anon: number; file: number } | undefined => {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? Number.NaN) * 1024;
    const rss = kb('VmRSS');
    return Number.isNaN(rss) ? undefined : { rss, anon: kb('RssAnon'), file: kb('RssFile') };
  } catch {
    return undefined;
  }
};

/**
 * What the V8 heaps of a process's threads had committed, and the external memory (buffers) their isolates
 * accounted for, at the moment `at`: the last sample of each thread the probe (loopProbe.mjs) wrote within the 25 s
 * before it, so a thread that ended before then (a parse thread replaced) does not count. The rest of the process's
 * anonymous memory is the C allocator's (docs/operations.md#the-soak).
 */
export const threadMemoryOf = (
  probeDir: string,
  pid: number,
  at: number,
): { heaps: number; external: number; threads: number } | undefined => {
  let heaps = 0;
  let external = 0;
  let threads = 0;
  let files: string[] = [];
  try {
    files = readdirSync(probeDir).filter((f) => f.startsWith(`mem-${pid}-`));
  } catch {
    return undefined;
  }
  for (const f of files) {
    let last: { t: number; heapTotal: number; external: number } | undefined;
    for (const line of readFileSync(join(probeDir, f), 'utf8').split('\n')) {
      if (!line) continue;
      try {
        const s = JSON.parse(line) as { t: number; heapTotal: number; external: number };
        if (s.t <= at) last = s;
      } catch {
        // a line being written as it was read
      }
    }
    if (last && last.t >= at - 25_000) {
      heaps += last.heapTotal;
      external += last.external;
      threads += 1;
    }
  }
  return threads > 0 ? { heaps, external, threads } : undefined;
};

/** each thread's CPU time (user + system, clock ticks) and name, from /proc/<pid>/task/<tid>/stat */
export const threadTimesOf = (pid: number): Map<number, { name: string; ticks: number; nice: number }> => {
  const out = new Map<number, { name: string; ticks: number; nice: number }>();
  let tasks: string[] = [];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const task of tasks) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const name = stat.slice(stat.indexOf('(') + 1, close);
      const f = stat.slice(close + 2).split(' ');
      // fields after the name: state is 3, utime 14, stime 15, nice 19 (proc(5)), here counted from 3
      out.set(Number(task), { name, ticks: Number(f[11]) + Number(f[12]), nice: Number(f[16]) });
    } catch {
      // the thread ended
    }
  }
  return out;
};

/**
 * The host's CPU pressure so far: microseconds in which some runnable task waited for a core (/proc/pressure/cpu,
 * `some total`), or undefined where the kernel does not report it. Two readings' difference over the wall time between
 * them is the share of that time the host had more work than cores, whoever's work it was.
 */
export const cpuPressureUs = (): number | undefined => {
  try {
    const m = /^some .*total=(\d+)/m.exec(readFileSync('/proc/pressure/cpu', 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
};
