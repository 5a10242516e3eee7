import { readFileSync, writeFileSync } from 'node:fs';
import { createHttpFetcher } from '../../services/adapters/fetcher/http.js';

/**
 * Run by bodyBounds.test.ts in a process of its own, so that its RSS is the fetcher's alone: fetches `warmUp` once
 * (the code paths load), then every other path at once, and prints what RSS did meanwhile as one JSON line.
 * Arguments: the origin, the warm-up path, then the paths fetched together.
 */
const [origin, warmUp, ...paths] = process.argv.slice(2);
const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);
const fetcher = createHttpFetcher({ http2: false });
const get = (path: string) =>
  fetcher.fetch({ url: `${origin}${path}`, device: 'desktop', captureAio: false, timeoutMs: 60_000 });

/** the kernel's own peak of this process's RSS since the last reset (Linux), which no sampling can miss */
const highWater = (): number | undefined => {
  try {
    const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
    return kb ? Number(kb) * 1024 : undefined;
  } catch {
    return undefined;
  }
};
/** whether the kernel's peak now counts from here: else it would hold the start-up's, and only sampling is used */
const resetHighWater = (): boolean => {
  try {
    writeFileSync('/proc/self/clear_refs', '5');
    return true;
  } catch {
    return false;
  }
};

await get(warmUp);
gc();
const before = process.memoryUsage().rss;
const fromHere = resetHighWater();
let sampled = before;
const sampler = setInterval(() => {
  sampled = Math.max(sampled, process.memoryUsage().rss);
}, 5);
const pages = await Promise.all(paths.map(get));
clearInterval(sampler);
const hwm = fromHere ? highWater() : undefined;
gc();
await new Promise((r) => setImmediate(r));
gc();
const after = process.memoryUsage().rss;
process.stdout.write(
  `${JSON.stringify({
    before,
    peak: Math.max(sampled, hwm ?? 0),
    after,
    pages: pages.map((p) => ({ status: p.status, overLimit: p.overLimit ?? false, body: p.body.byteLength })),
  })}\n`,
);
