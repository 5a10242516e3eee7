// The soak's reader (docs/operations.md#the-soak): the reads the "reads' p99 within 2x idle" invariant times, made and
// timed in a process of its own, as a client on another machine would. The harness decides each read and when it
// goes; this process sends it and times it from the request to the last byte of the answer. Its event loop does
// nothing else, so what it times is the service, not the harness's own loop (which also serves the fake Google's
// pages, the proxies and the receivers: 9 MB pages and gzip bombs among them).
//
// Protocol: one JSON object a line on stdin, `{"id":1,"url":"…","key":"…"}`; one a line on stdout for each,
// `{"id":1,"status":200,"ms":3.2,"timing":"…"}` (timing: the Server-Timing header, when sent) or
// `{"id":1,"error":"…"}`. It exits when stdin closes.
import http from 'node:http';
import { createInterface } from 'node:readline';

// node:http with its body drained and dropped: fetch() costs several times the CPU per read; sockets are kept alive
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
const reply = (line) => process.stdout.write(`${JSON.stringify(line)}\n`);

const read = ({ id, url, key }) => {
  const t0 = performance.now();
  const req = http.get(url, { agent, headers: { 'x-api-key': key }, timeout: 60_000 }, (res) => {
    res.on('data', () => undefined);
    res.on('end', () => {
      const timing = res.headers['server-timing'];
      reply({ id, status: res.statusCode, ms: performance.now() - t0, ...(timing ? { timing } : {}) });
    });
    res.on('error', (err) => reply({ id, error: String(err.code ?? err.message) }));
  });
  req.on('timeout', () => req.destroy(new Error('no answer within 60 s')));
  req.on('error', (err) => reply({ id, error: String(err.code ?? err.message) }));
};

const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  if (line.trim()) read(JSON.parse(line));
});
lines.on('close', () => {
  agent.destroy();
  process.exit(0);
});
