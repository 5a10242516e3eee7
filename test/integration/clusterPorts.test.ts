import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { type ClusterProcess, waitHealthy } from '../../services/cli/dev/cluster.js';
import { describePortOwner } from '../../services/threads/portOwner.js';
import { cliResult } from '../support/service.js';

/**
 * `cluster up` tells the truth (docs/distributed.md#a-cluster-on-one-machine): beside a port another process holds
 * (a running `npm start`), it refuses to start and names the port and what holds it; and a process counts as up only
 * when its port answers with the process's own instance id, never another's.
 */

/** an HTTP server on a free port whose /health says `body` (what an older service on that port would say) */
const occupy = async (t: Test, body: () => unknown): Promise<{ server: Server; port: number }> => {
  const server = createServer((req, res) => {
    if (req.url === '/health') res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body()));
    else res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  return { server, port: (server.address() as AddressInfo).port };
};

t.test('cluster up › a port it needs is taken: it refuses, naming the port and its owner', async (t) => {
  const { port } = await occupy(t, () => ({ status: 'ok', instance_id: 'ins_0123456789ab' }));
  const dir = mkdtempSync(join(tmpdir(), 'serp-cluster-ports-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const started = Date.now();
  const res = await cliResult(['cluster', 'up', '--port', String(port), '--dir', dir]);
  t.equal(res.code, 1, 'a failure exit');
  t.match(res.stderr, `cannot start the cluster: its 6 processes need ports ${port}–${port + 5}`);
  t.match(res.stderr, `${port}: taken; pid ${process.pid} (`, 'the process that holds it, by pid and command');
  t.match(
    res.stderr,
    'it answers GET /health with 200 {"status":"ok","instance_id":"ins_0123456789ab"}',
    'what it says',
  );
  t.match(res.stderr, /give --port a first port/, 'and what to do');
  t.notMatch(res.stdout, /cluster up/, 'never "up"');
  t.notOk(existsSync(join(dir, 'nats')), 'nothing was started: no nats-server node');
  t.ok(Date.now() - started < 30_000, 'it says so at once');
});

t.test('cluster up › what holds a port: its pid and command, and its /health', async (t) => {
  const { port } = await occupy(t, () => ({ status: 'ok', instance_id: 'clu_other/api-1' }));
  const owner = await describePortOwner(port);
  t.match(owner, new RegExp(`^pid ${process.pid} \\(.*node`), `the pid (Linux /proc): ${owner}`);
  t.match(owner, /it answers GET \/health with 200 \{"status":"ok","instance_id":"clu_other\/api-1"\}$/);
  const silent = createServer((socket) => socket.destroy());
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
  t.teardown(() => new Promise<void>((r) => silent.close(() => r())));
  t.match(await describePortOwner((silent.address() as AddressInfo).port), /it does not answer HTTP$/);
});

t.test('cluster up › a process is up only when its port answers with its own instance id', async (t) => {
  let answering = 'ins_another';
  const { port } = await occupy(t, () => ({ status: 'ok', instance_id: answering }));
  // a role process that never binds its port (it lost it to the server above), alive until killed
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  t.teardown(() => {
    child.kill('SIGKILL');
  });
  const p: ClusterProcess = {
    name: 'api-1',
    roles: 'api',
    port,
    url: `http://127.0.0.1:${port}`,
    dataDir: join(tmpdir(), 'unused'),
    instanceId: 'clu_00000000/api-1',
    child,
    log: [],
  };
  await t.rejects(
    waitHealthy(p, 1_500),
    new RegExp(
      `api-1 \\(api\\) not healthy after 1500 ms\\nport ${port} is answered by another process: GET /health gave 200 .*ins_another`,
    ),
    'another process answering its port is not this one',
  );
  answering = 'clu_00000000/api-1';
  await t.resolves(waitHealthy(p, 1_500), 'its own instance id: up');
  answering = 'ins_another';
  child.kill('SIGKILL');
  await new Promise((r) => child.once('exit', r));
  await t.rejects(
    waitHealthy(p, 1_500),
    new RegExp(
      `api-1 \\(api\\) exited during start\\nport ${port} is held by another process: pid ${process.pid} \\(.*ins_another`,
    ),
    'a process that exited: what holds its port',
  );
});

t.test('serve › a taken port: it refuses, naming the port and what holds it', async (t) => {
  const { port } = await occupy(t, () => ({ status: 'ok', instance_id: 'ins_0123456789ab' }));
  const dir = mkdtempSync(join(tmpdir(), 'serp-serve-port-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const res = await cliResult(['serve', '--port', String(port), '--data', dir]);
  t.equal(res.code, 1, 'a failure exit');
  t.match(res.stderr, `cannot listen on 127.0.0.1:${port}: the port is taken; pid ${process.pid} (`, 'the holder');
  t.match(
    res.stderr,
    'it answers GET /health with 200 {"status":"ok","instance_id":"ins_0123456789ab"}',
    'what it says',
  );
  t.match(res.stderr, /serve on another port \(--port N or SERP_PORT/, 'and what to do');
  t.notMatch(res.stderr, /^serp-api: listen EADDRINUSE/m, 'not the bare system error');
});
