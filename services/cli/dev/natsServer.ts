import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { processEnv } from '../../config/env.js';
import { Environment } from '../../config/schema.js';

/**
 * Local nats-server processes with JetStream and `sync_interval: always` (an acknowledged write is fsync'd): one node
 * or a cluster of several on loopback. Used by `serp-api cluster up` and by the tests; production runs its own servers
 * (deploy/).
 */
export interface NatsNode {
  name: string;
  port: number;
  clusterPort: number;
  url: string;
  storeDir: string;
  configFile: string;
  process?: ChildProcess;
}

export interface NatsServers {
  nodes: NatsNode[];
  /** comma-separated client URLs of every node: what SERP_NATS_URL takes */
  urls: string;
  /** SIGKILL (default) or SIGTERM one node and wait for its pid to exit */
  stopNode(index: number, signal?: NodeJS.Signals): Promise<void>;
  /** starts a stopped node again on the same ports and data */
  startNode(index: number): Promise<void>;
  /** stops every node (SIGTERM, then SIGKILL after 5 s) */
  stop(): Promise<void>;
}

export const MIN_NATS_SERVER = [2, 11] as const;

/** the nats-server binary: SERP_NATS_SERVER, else `nats-server` on PATH; with its version */
export const findNatsServer = (env: Readonly<Record<string, string | undefined>> = processEnv()) => {
  const bin = Environment.pick({ SERP_NATS_SERVER: true }).parse(env).SERP_NATS_SERVER;
  try {
    const out = execFileSync(bin, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    const m = /v(\d+)\.(\d+)\.(\d+)/.exec(out);
    if (!m) return { bin, problem: `could not read the version of ${bin} ("${out.trim()}")` };
    const [maj, min] = [Number(m[1]), Number(m[2])];
    const ok = maj > MIN_NATS_SERVER[0] || (maj === MIN_NATS_SERVER[0] && min >= MIN_NATS_SERVER[1]);
    return {
      bin,
      version: `${m[1]}.${m[2]}.${m[3]}`,
      problem: ok
        ? undefined
        : `${bin} is ${m[1]}.${m[2]}.${m[3]}; distributed mode needs nats-server ${MIN_NATS_SERVER.join('.')} or newer (docs/distributed.md)`,
    };
  } catch {
    return {
      bin,
      problem: `${bin} not found: install nats-server ${MIN_NATS_SERVER.join('.')}+ or set SERP_NATS_SERVER`,
    };
  }
};

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });

const configOf = (node: NatsNode, all: NatsNode[], clusterName: string) => {
  const routes = all.filter((n) => n !== node).map((n) => `nats-route://127.0.0.1:${n.clusterPort}`);
  return [
    `server_name: ${node.name}`,
    `listen: 127.0.0.1:${node.port}`,
    'max_payload: 8MB',
    `jetstream {\n  store_dir: ${JSON.stringify(node.storeDir)}\n  sync_interval: always\n  max_file_store: 4GB\n}`,
    all.length > 1
      ? `cluster {\n  name: ${clusterName}\n  listen: 127.0.0.1:${node.clusterPort}\n  routes: [\n    ${routes.join('\n    ')}\n  ]\n}`
      : '',
  ].join('\n');
};

export const exited = (p: ChildProcess) =>
  p.exitCode !== null || p.signalCode !== null
    ? Promise.resolve()
    : new Promise<void>((resolve) => p.once('exit', () => resolve()));

/** SIGTERM, then SIGKILL if it is still there after `graceMs`; resolves once it has exited */
export const stopChild = async (p: ChildProcess, graceMs: number) => {
  p.kill('SIGTERM');
  const timer = setTimeout(() => p.kill('SIGKILL'), graceMs);
  await exited(p);
  clearTimeout(timer);
};

/** waits until JetStream answers on `url` (on a cluster: once a meta leader is elected) */
export const waitForJetStream = async (url: string, timeoutMs = 30_000) => {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const nc = await connect({ servers: url, timeout: 1_000, reconnect: false });
      try {
        const jsm = await jetstreamManager(nc, { timeout: 2_000 });
        await jsm.getAccountInfo();
        return;
      } finally {
        await nc.close();
      }
    } catch (err) {
      last = err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`JetStream on ${url} not ready after ${timeoutMs} ms: ${String(last)}`);
};

export const startNatsServers = async (options: {
  count: number;
  dir: string;
  clusterName?: string;
  /** log lines of the servers go here (default: dropped) */
  log?: (line: string) => void;
  env?: NodeJS.ProcessEnv;
}): Promise<NatsServers> => {
  const found = findNatsServer(options.env);
  if (found.problem) throw new Error(found.problem);
  const nodes: NatsNode[] = [];
  for (let i = 0; i < options.count; i++) {
    const name = `n${i + 1}`;
    const storeDir = join(options.dir, name);
    mkdirSync(storeDir, { recursive: true });
    const port = await freePort();
    const clusterPort = await freePort();
    nodes.push({
      name,
      port,
      clusterPort,
      url: `nats://127.0.0.1:${port}`,
      storeDir,
      configFile: join(options.dir, `${name}.conf`),
    });
  }
  for (const n of nodes) writeFileSync(n.configFile, configOf(n, nodes, options.clusterName ?? 'serp'));

  const launch = (n: NatsNode) => {
    const p = spawn(found.bin, ['-c', n.configFile], { stdio: ['ignore', 'ignore', 'pipe'] });
    p.stderr?.setEncoding('utf8');
    p.stderr?.on('data', (chunk: string) => {
      for (const line of chunk.split('\n')) if (line) options.log?.(`[${n.name}] ${line}`);
    });
    n.process = p;
  };
  for (const n of nodes) launch(n);
  await Promise.all(nodes.map((n) => waitForJetStream(n.url)));

  const stopNode = async (index: number, signal: NodeJS.Signals = 'SIGKILL') => {
    const p = nodes[index].process;
    if (!p) return;
    p.kill(signal);
    await exited(p);
    nodes[index].process = undefined;
  };

  return {
    nodes,
    urls: nodes.map((n) => n.url).join(','),
    stopNode,
    async startNode(index) {
      launch(nodes[index]);
      await waitForJetStream(nodes[index].url);
    },
    async stop() {
      await Promise.all(
        nodes.map(async (n) => {
          if (!n.process) return;
          await stopChild(n.process, 5_000);
          n.process = undefined;
        }),
      );
    },
  };
};
