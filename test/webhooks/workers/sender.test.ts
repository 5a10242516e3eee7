import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { loadConfig } from '../../../services/config/config.js';
import { createSender, RECEIVER_BODY_CAP } from '../../../services/webhooks/workers/sender.js';

/**
 * The sender reads a receiver's answer only for its status (docs/webhooks.md#delivery): a body past a small cap is
 * not read, and the connection is closed, so a receiver answering 1 GB costs neither its bandwidth nor our CPU.
 */
t.test('sender › an endless answer is cut off after the cap, with the status kept', async (t) => {
  let sent = 0;
  let closed = false;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(64 * 1024, 120);
      // writes as fast as the socket drains, up to 1 GB, until the sender closes the connection
      const pump = () => {
        while (!res.destroyed && sent < 1024 ** 3) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      res.on('close', () => {
        closed = true;
      });
      pump();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const { port } = server.address() as AddressInfo;
  const sender = createSender({
    allowHttp: true,
    allowPrivate: true,
    resolve: async () => [{ address: '127.0.0.1', family: 4 }],
    timeoutMs: 10_000,
    maxSockets: loadConfig({}).webhookConcurrency,
  });
  t.teardown(() => sender.close());
  const t0 = performance.now();
  const outcome = await sender.send(`http://127.0.0.1:${port}/hook`, {}, '{}');
  const ms = performance.now() - t0;
  t.equal(outcome.statusCode, 200, 'the status is the answer');
  t.equal(outcome.error, undefined, 'no error');
  t.ok(ms < 5_000, `answered in ${Math.round(ms)} ms, not after the timeout`);
  for (let i = 0; i < 200 && !closed; i++) await new Promise((r) => setTimeout(r, 10));
  t.ok(closed, 'the connection was closed');
  // what the socket buffers on either side is sent before the close is seen: far below the 1 GB the receiver offered
  t.ok(sent < 64 * 1024 * 1024, `the receiver wrote ${(sent / 1024 / 1024).toFixed(1)} MB of 1,024 before the close`);
  t.ok(RECEIVER_BODY_CAP <= 64 * 1024, 'the cap is small');
});

t.test('sender › a small answer keeps the connection for the next attempt', async (t) => {
  const sockets = new Set<unknown>();
  const server = createServer((req, res) => {
    sockets.add(req.socket);
    req.resume();
    req.on('end', () => res.writeHead(204).end());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const { port } = server.address() as AddressInfo;
  const sender = createSender({
    allowHttp: true,
    allowPrivate: true,
    resolve: async () => [{ address: '127.0.0.1', family: 4 }],
    timeoutMs: 10_000,
    maxSockets: loadConfig({}).webhookConcurrency,
  });
  t.teardown(() => sender.close());
  for (let i = 0; i < 3; i++) t.equal((await sender.send(`http://127.0.0.1:${port}/`, {}, '{}')).statusCode, 204);
  t.equal(sockets.size, 1, 'three attempts over one connection');
});
