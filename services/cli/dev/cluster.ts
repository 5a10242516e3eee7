import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadOrCreateSecrets } from '../../compose/embedded/secrets.js';
import { processEnv } from '../../config/env.js';
import { ALLOCATOR_ENV } from '../../runtime/allocator.js';
import { describePortOwner, portTaken } from '../../threads/portOwner.js';
import { exited, freePort, type NatsServers, startNatsServers, stopChild } from './natsServer.js';

/**
 * A whole distributed deployment on loopback (`serp-api cluster up`, the end-to-end tests, the scale bench): three
 * nats-server nodes with JetStream and `sync_interval: always`, then api, crawler, dispatcher and projector
 * processes of `serp-api serve --role …`, each with its own data directory. It is up only when every process it
 * started is alive and its port answers with that process's own name (docs/distributed.md#a-cluster-on-one-machine).
 */
export interface ClusterProcess {
  name: string;
  roles: string;
  port: number;
  url: string;
  dataDir: string;
  /** SERP_INSTANCE_ID it runs with: its port's `/health` must answer it, or another process holds the port */
  instanceId: string;
  /** this process's own variables over the cluster's (e.g. a crawler's SERP_CRAWLER_CONCURRENCY) */
  env?: NodeJS.ProcessEnv;
  child?: ChildProcess;
  /** stderr lines, kept for a test to show when something fails */
  log: string[];
}

export interface LocalCluster {
  /** `clu_…`, the prefix of every process's instance id */
  clusterId: string;
  nats: NatsServers;
  processes: ClusterProcess[];
  apiUrls: string[];
  adminToken: string;
  env: NodeJS.ProcessEnv;
  /** starts one more process of the given roles (e.g. a crawler added under load), with variables of its own */
  add(roles: string, name?: string, env?: NodeJS.ProcessEnv): Promise<ClusterProcess>;
  /** SIGKILL (default) or SIGTERM a process and wait for it to exit */
  kill(p: ClusterProcess, signal?: NodeJS.Signals): Promise<void>;
  /** starts a stopped process again on its port and data */
  restart(p: ClusterProcess): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The checkout (or installed package): the folder holding bin/serp-api.js, three folders up from these sources and
 * four from their build in dist/ (`npm start` builds; `npm run cluster` then runs from dist/).
 */
export const checkoutRoot = (from: string | URL = import.meta.url): string => {
  for (const up of ['../../..', '../../../..']) {
    const dir = resolve(fileURLToPath(new URL(up, from)));
    if (existsSync(join(dir, 'bin', 'serp-api.js'))) return dir;
  }
  throw new Error(`no bin/serp-api.js above ${fileURLToPath(from)}: not inside a checkout of serp-api`);
};

export interface ClusterOptions {
  dir: string;
  apis?: number;
  crawlers?: number;
  /** first api port (default: free ports) */
  basePort?: number;
  /** extra environment for every role (SERP_GOOGLE_ORIGIN, SERP_FETCHER, …) */
  env?: NodeJS.ProcessEnv;
  /** how to run the CLI (default: node bin/serp-api.js, which runs dist/ when built, else the sources) */
  command?: string[];
  /** nats-server nodes (default 3) */
  natsNodes?: number;
  log?: (line: string) => void;
}

/** the process's last log lines, for an error that says why it stopped */
const tail = (p: ClusterProcess) => (p.log.length ? `\n${p.log.slice(-20).join('\n')}` : '');

const ownHealth = async (p: ClusterProcess): Promise<{ own: boolean; answer?: string }> => {
  try {
    const res = await fetch(`${p.url}/health`, { signal: AbortSignal.timeout(1_000) });
    const text = await res.text();
    let id: unknown;
    try {
      id = (JSON.parse(text) as { instance_id?: unknown }).instance_id;
    } catch {
      // not JSON: not a serp-api process
    }
    return { own: res.ok && id === p.instanceId, answer: `${res.status} ${text.replace(/\s+/g, ' ').slice(0, 200)}` };
  } catch {
    return { own: false };
  }
};

/**
 * Waits until GET url/health answers 200 with the process's own instance id; fails when the process exits first, or
 * when the time is up. Another process answering the port (one that held it before the cluster started) is named in
 * the error: it is never taken for this one.
 */
export const waitHealthy = async (p: ClusterProcess, timeoutMs = 60_000) => {
  const deadline = Date.now() + timeoutMs;
  let foreign: string | undefined;
  const other = () => (foreign ? `\nport ${p.port} is answered by another process: GET /health gave ${foreign}` : '');
  while (Date.now() < deadline) {
    if (!p.child || p.child.exitCode !== null || p.child.signalCode !== null) {
      // most often because another process holds its port: say which
      const holder =
        (await portTaken(p.port)) === 'EADDRINUSE'
          ? `\nport ${p.port} is held by another process: ${await describePortOwner(p.port)}`
          : '';
      throw new Error(`${p.name} (${p.roles}) exited during start${holder}${tail(p)}`);
    }
    const health = await ownHealth(p);
    if (health.own) return;
    if (health.answer) foreign = health.answer;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${p.name} (${p.roles}) not healthy after ${timeoutMs} ms${other()}${tail(p)}`);
};

/**
 * Refuses ports another process holds, before anything starts: one line per taken port, naming what holds it (the
 * process when /proc says, and what its `/health` answers).
 */
const checkPortsFree = async (first: number, count: number) => {
  const ports = Array.from({ length: count }, (_, i) => first + i);
  const taken = (await Promise.all(ports.map(async (port) => ({ port, code: await portTaken(port) })))).filter(
    (p) => p.code !== undefined,
  );
  if (taken.length === 0) return;
  const lines = await Promise.all(
    taken.map(async ({ port, code }) =>
      code === 'EADDRINUSE'
        ? `  ${port}: taken; ${await describePortOwner(port)}`
        : `  ${port}: cannot listen (${code})`,
    ),
  );
  throw new Error(
    [
      `cannot start the cluster: its ${count} processes need ports ${first}–${first + count - 1} (the first api on --port, the others after it), and ${taken.length === 1 ? 'one is' : `${taken.length} are`} not free:`,
      ...lines,
      'stop what holds them (a running `npm start` serves on 8080), or give --port a first port with free ones after it',
    ].join('\n'),
  );
};

export const startLocalCluster = async (options: ClusterOptions): Promise<LocalCluster> => {
  const apiCount = options.apis ?? 2;
  const crawlerCount = options.crawlers ?? 2;
  if (options.basePort !== undefined) await checkPortsFree(options.basePort, apiCount + crawlerCount + 2);
  mkdirSync(options.dir, { recursive: true });
  // kept in the cluster's folder, as embedded mode keeps its own: keys minted on a run still work on the next, over
  // the same log, and the admin token can be read from the file (docs/distributed.md)
  const { secrets } = loadOrCreateSecrets(options.dir, {});
  const clusterId = `clu_${randomBytes(4).toString('hex')}`;
  const nats = await startNatsServers({
    count: options.natsNodes ?? 3,
    dir: join(options.dir, 'nats'),
    log: options.log,
  });
  const env: NodeJS.ProcessEnv = {
    // the allocator's settings of the image (docs/operations.md#memory), unless the caller's environment sets its own
    ...ALLOCATOR_ENV,
    ...processEnv(),
    SERP_EVENTSTORE_URL: nats.urls,
    SERP_NATS_URL: nats.urls,
    SERP_NATS_REPLICAS: String(Math.min(3, options.natsNodes ?? 3) === 3 ? 3 : 1),
    SERP_KEY_PEPPER: secrets.keyPepper,
    SERP_ADMIN_TOKEN: secrets.adminToken,
    SERP_LINK_SECRET: secrets.linkSecret,
    ...options.env,
  };
  const adminToken = env.SERP_ADMIN_TOKEN as string;
  const repoRoot = checkoutRoot();
  const command = options.command ?? [process.execPath, join(repoRoot, 'bin', 'serp-api.js')];
  const processes: ClusterProcess[] = [];
  let nextPort = options.basePort;
  const portFor = async () => (nextPort !== undefined ? nextPort++ : freePort());

  const launch = (p: ClusterProcess) => {
    const child = spawn(
      command[0],
      [...command.slice(1), 'serve', '--role', p.roles, '--port', String(p.port), '--data', p.dataDir],
      { env: { ...env, ...p.env, SERP_INSTANCE_ID: p.instanceId }, stdio: ['ignore', 'pipe', 'pipe'], cwd: repoRoot },
    );
    const onData = (chunk: string) => {
      for (const line of chunk.split('\n')) {
        if (!line) continue;
        p.log.push(line);
        if (p.log.length > 500) p.log.shift();
        options.log?.(`[${p.name}] ${line}`);
      }
    };
    for (const stream of [child.stdout, child.stderr]) {
      stream?.setEncoding('utf8');
      stream?.on('data', onData);
    }
    p.child = child;
  };

  const add = async (roles: string, name?: string, own?: NodeJS.ProcessEnv) => {
    const port = await portFor();
    const n = name ?? `${roles.replace(/,/g, '+')}-${processes.filter((q) => q.roles === roles).length + 1}`;
    const p: ClusterProcess = {
      name: n,
      roles,
      port,
      url: `http://127.0.0.1:${port}`,
      dataDir: join(options.dir, n),
      instanceId: `${clusterId}/${n}`,
      env: own,
      log: [],
    };
    processes.push(p);
    launch(p);
    await waitHealthy(p);
    return p;
  };

  const stopAll = async () => {
    await Promise.all(
      processes.map(async (p) => {
        if (!p.child) return;
        await stopChild(p.child, 15_000);
        p.child = undefined;
      }),
    );
    await nats.stop();
  };

  try {
    // every process at once, as a deployment starts them in any order (each creates the JetStream streams, consumers
    // and stores it needs if no other has yet: docs/distributed.md#a-cluster-on-one-machine). The ports are taken in
    // this order when `add` is called, before it waits: the api processes on the first, the ones the operator expects
    const apiStarts = Array.from({ length: apiCount }, (_, i) => add('api', `api-${i + 1}`));
    const [apis] = await Promise.all([
      Promise.all(apiStarts),
      add('dispatcher', 'dispatcher'),
      add('projector', 'projector'),
      ...Array.from({ length: crawlerCount }, (_, i) => add('crawler', `crawler-${i + 1}`)),
    ]);
    // up means every process, not only the last to start: one may have died while the others started
    for (const p of processes) await waitHealthy(p, 5_000);
    return {
      clusterId,
      nats,
      processes,
      apiUrls: apis.map((a) => a.url),
      adminToken,
      env,
      add,
      async kill(p, signal = 'SIGKILL') {
        const c = p.child;
        if (!c) return;
        c.kill(signal);
        await exited(c);
        p.child = undefined;
      },
      async restart(p) {
        launch(p);
        await waitHealthy(p);
      },
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
};
