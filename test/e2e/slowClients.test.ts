import { connect } from 'node:net';
import t from 'tap';
import { cli, removeDir, startService, tempDataDir } from '../support/service.js';

/** Raw HTTP on a socket: what a hostile or broken client sends, and everything the server answers until it closes. */
const raw = (url: string, request: string, options: { keepOpenMs?: number } = {}) =>
  new Promise<{ text: string; ms: number }>((resolve, reject) => {
    const { hostname, port } = new URL(url);
    const started = Date.now();
    const socket = connect(Number(port), hostname);
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => {
      text += d;
    });
    socket.on('error', reject);
    socket.on('close', () => resolve({ text, ms: Date.now() - started }));
    socket.write(request);
    // the client itself never closes before the server does (a slow client)
    if (options.keepOpenMs) setTimeout(() => socket.destroy(), options.keepOpenMs).unref();
  });

t.test('slow and odd clients against a listening server', async (t) => {
  const data = tempDataDir();
  // a good key, so a request gets past authentication and waits for its body
  const { key } = JSON.parse(await cli(['keys', 'create', '--tier', 'pro', '--json', '--data', data])) as {
    key: string;
  };
  const svc = await startService(data, { SERP_REQUEST_TIMEOUT_MS: '1000', SERP_HEADERS_TIMEOUT_MS: '1000' });
  t.teardown(async () => {
    await svc.stop();
    removeDir(data);
  });

  t.test(
    'a body shorter than its Content-Length › 408 with a JSON detail, connection closed within the timeout',
    async (t) => {
      const { text, ms } = await raw(
        svc.url,
        `POST /v1/search HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"keyword":`,
        { keepOpenMs: 20_000 },
      );
      t.match(text, /^HTTP\/1\.1 408 /);
      t.match(text, /"detail":"request timeout/);
      t.ok(ms < 5000, `closed after ${ms} ms`);
    },
  );

  t.test('headers that never end › closed within the header timeout', async (t) => {
    const { text, ms } = await raw(svc.url, 'GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ', { keepOpenMs: 20_000 });
    t.match(text, /^HTTP\/1\.1 408 |^$/, 'a 408 or a plain close');
    t.ok(ms < 5000, `closed after ${ms} ms`);
  });

  t.test('an HTTP/1.1 request without Host › 400 with a JSON detail', async (t) => {
    const { text } = await raw(svc.url, 'GET /health HTTP/1.1\r\n\r\n');
    t.match(text, /^HTTP\/1\.1 400 /);
    t.match(text, /"detail":"missing Host header/);
  });

  t.test('the server still answers after all of that', async (t) => {
    const res = await fetch(`${svc.url}/health`);
    t.equal(res.status, 200);
  });
});
