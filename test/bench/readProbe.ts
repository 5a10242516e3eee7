/**
 * The read probe of `readUnderCrawl.ts`, in a process of its own: four probes read `url` back to back on four
 * kept-alive sockets until standard input closes, then print each read's milliseconds as JSON (`{ times, bytes }`,
 * bytes: the average answer read in full) on the line after `probing`. Its own event loop does nothing else, so what it times is the service,
 * not the bench's load driver (submits and polls) or the probe's neighbours.
 * `node --import tsx test/bench/readProbe.ts URL KEY` (started by the bench; not a benchmark by itself).
 */
import http from 'node:http';

const [url, key] = process.argv.slice(2);
if (!url || !key) {
  console.error('usage: readProbe.ts URL KEY');
  process.exit(2);
}
let stop = false;
process.stdin.on('end', () => {
  stop = true;
});
process.stdin.resume();

const times: number[] = [];
let bytes = 0;
// node:http, the body drained and dropped: fetch() cost ~4x the CPU per read (undici's stream layers and the
// ArrayBuffer it assembles), and on two cores the instrument's own CPU is taken from the service it times
const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
const readOnce = () =>
  new Promise<void>((done, fail) => {
    const req = http.get(url, { agent, headers: { 'x-api-key': key } }, (res) => {
      if (res.statusCode !== 200) fail(new Error(`probe: HTTP ${res.statusCode}`));
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
      });
      res.on('end', done);
      res.on('error', fail);
    });
    req.on('error', fail);
  });
// the bench starts timing its phase once the probe is running
process.stdout.write('probing\n');
await Promise.all(
  Array.from({ length: 4 }, async () => {
    while (!stop) {
      const t0 = performance.now();
      await readOnce();
      times.push(performance.now() - t0);
    }
  }),
);
agent.destroy();
process.stdout.write(JSON.stringify({ times, bytes: bytes / Math.max(1, times.length) }));
