/**
 * The read probe of `readUnderCrawl.ts`, in a process of its own: reads `url` at a fixed rate (`RATE` a second,
 * default 200) until standard input closes, each read a request of its own sent on schedule whether or not the ones
 * before it have answered, then prints each read's milliseconds (sent to answer read in full) as JSON
 * (`{ times, bytes, failures, failureKinds }`, bytes: the average answer; failures: reads that were not a 200 or
 * did not complete, kept out of `times`, counted by kind) on the line after `probing`. Its own event loop does nothing else,
 * so what it times is the service, not the bench's load driver (submits and polls) or the probe's neighbours.
 *
 * Open loop, not readers back to back: readers that wait for their answer before sending the next saturate the
 * service when it is idle (~9,000 reads a second here, so "idle" was a service busy serving the probe), and a stall
 * of the service delays only the four reads in flight, so the stalls a user meets while crawls run hardly reach p99.
 * `node --import tsx test/bench/readProbe.ts URL KEY [RATE]` (started by the bench; not a benchmark by itself).
 */
import http from 'node:http';

const [url, key, rateArg] = process.argv.slice(2);
const rate = Number(rateArg ?? 200);
if (!url || !key || !(rate > 0)) {
  console.error('usage: readProbe.ts URL KEY [RATE]');
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
// ArrayBuffer it assembles), and on two cores the instrument's own CPU is taken from the service it times. Sockets
// are kept alive and as many as the reads in flight, so a read never waits for another's socket.
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
let failures = 0;
/** what the failed reads were: `HTTP 503`, `ECONNRESET`, … and how many of each */
const failureKinds: Record<string, number> = {};
const readOnce = () =>
  new Promise<void>((done, fail) => {
    const req = http.get(url, { agent, headers: { 'x-api-key': key } }, (res) => {
      const ok = res.statusCode === 200;
      res.on('data', (chunk: Buffer) => {
        if (ok) bytes += chunk.length;
      });
      res.on('end', () => (ok ? done() : fail(new Error(`HTTP ${res.statusCode}`))));
      res.on('error', fail);
    });
    req.on('error', fail);
  });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const inFlight = new Set<Promise<void>>();
// the bench starts timing its phase once the probe is running
process.stdout.write('probing\n');
const period = 1000 / rate;
let next = performance.now();
while (!stop) {
  const t0 = performance.now();
  const read = readOnce().then(
    () => {
      times.push(performance.now() - t0);
    },
    (err: NodeJS.ErrnoException) => {
      failures += 1;
      const kind = err.code ?? err.message;
      failureKinds[kind] = (failureKinds[kind] ?? 0) + 1;
    },
  );
  inFlight.add(read);
  void read.finally(() => inFlight.delete(read));
  next += period;
  await sleep(Math.max(0, next - performance.now()));
}
await Promise.all(inFlight);
agent.destroy();
process.stdout.write(JSON.stringify({ times, bytes: bytes / Math.max(1, times.length), failures, failureKinds }));
