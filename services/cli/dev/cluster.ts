import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { processEnv } from '../../config/env.js';
import { exited, freePort, type NatsServers, startNatsServers, stopChild } from './natsServer.js';

/**
 * A whole distributed deployment on loopback (`serp-api cluster up`, the end-to-end tests, the scale bench): three
 * nats-server nodes with JetStream and `sync_interval: always`, then api, crawler, dispatcher and projector
 * processes of `serp-api serve --role …`, each with its own data directory.
 */
export interface ClusterProcess {
  name: string;
  roles: string;
  port: number;
  url: string;
  dataDir: string;
  child?: ChildProcess;
  /** stderr lines, kept for a test to show when something fails */
  log: string[];
}

export interface LocalCluster {
  nats: NatsServers;
  processes: ClusterProcess[];
  apiUrls: string[];
  adminToken: string;
  env: NodeJS.ProcessEnv;
  /** starts one more process of the given roles (e.g. a crawler added under load) */
  add(roles: string, name?: string): Promise<ClusterProcess>;
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

/** waits until GET url/health answers 200, or the process exits */
const waitHealthy = async (p: ClusterProcess, timeoutMs = 60_000) => {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!p.child || p.child.exitCode !== null) {
      throw new Error(`${p.name} (${p.roles}) exited during start:\n${p.log.slice(-20).join('\n')}`);
    }
    try {
      const res = await fetch(`${p.url}/health`, { signal: AbortSignal.timeout(1_000) });
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${p.name} (${p.roles}) not healthy after ${timeoutMs} ms:\n${p.log.slice(-20).join('\n')}`);
};

export const startLocalCluster = async (options: ClusterOptions): Promise<LocalCluster> => {
  mkdirSync(options.dir, { recursive: true });
  const nats = await startNatsServers({
    count: options.natsNodes ?? 3,
    dir: join(options.dir, 'nats'),
    log: options.log,
  });
  const adminToken = `adm_${randomBytes(24).toString('base64url')}`;
  const env: NodeJS.ProcessEnv = {
    ...processEnv(),
    SERP_EVENTSTORE_URL: nats.urls,
    SERP_NATS_URL: nats.urls,
    SERP_NATS_REPLICAS: String(Math.min(3, options.natsNodes ?? 3) === 3 ? 3 : 1),
    SERP_KEY_PEPPER: randomBytes(24).toString('base64url'),
    SERP_ADMIN_TOKEN: adminToken,
    SERP_LINK_SECRET: randomBytes(24).toString('base64url'),
    ...options.env,
  };
  const repoRoot = checkoutRoot();
  const command = options.command ?? [process.execPath, join(repoRoot, 'bin', 'serp-api.js')];
  const processes: ClusterProcess[] = [];
  let nextPort = options.basePort;
  const portFor = async () => (nextPort !== undefined ? nextPort++ : freePort());

  const launch = (p: ClusterProcess) => {
    const child = spawn(
      command[0],
      [...command.slice(1), 'serve', '--role', p.roles, '--port', String(p.port), '--data', p.dataDir],
      { env, stdio: ['ignore', 'pipe', 'pipe'], cwd: repoRoot },
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

  const add = async (roles: string, name?: string) => {
    const port = await portFor();
    const n = name ?? `${roles.replace(/,/g, '+')}-${processes.filter((q) => q.roles === roles).length + 1}`;
    const p: ClusterProcess = {
      name: n,
      roles,
      port,
      url: `http://127.0.0.1:${port}`,
      dataDir: join(options.dir, n),
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
    // the api processes first, on the ports the operator expects; the others in parallel after
    const apis = [];
    for (let i = 0; i < (options.apis ?? 2); i++) apis.push(await add('api', `api-${i + 1}`));
    await Promise.all([
      add('dispatcher', 'dispatcher'),
      add('projector', 'projector'),
      ...Array.from({ length: options.crawlers ?? 2 }, (_, i) => add('crawler', `crawler-${i + 1}`)),
    ]);
    return {
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
