/**
 * What `depth` saves (docs/depth.md): N top-10 searches with `depth: 10` against the same N with the default
 * `depth: 100` (what every search cost before depth existed), through one `serp-api serve` and the fake Google, which
 * answers each page after a fixed latency and counts the requests. Each round submits a batch of fresh keywords (no
 * cache on either side) at once and polls them until they end; the sides alternate which goes first. Reported per
 * side: Google requests, requests per search, wall time, searches a minute; then depth-100 / depth-10 as ratios,
 * none when a side had a failure.
 * Run: npx tsx test/bench/depth.ts [searches per side, default 24] [rounds, default 4] [page latency ms, default 150]
 */
import { startFakeGoogle } from '../support/fakeGoogle.js';
import { cli, pollJob, removeDir, startService, submit, tempDataDir } from '../support/service.js';

const perSide = Number(process.argv[2] ?? 24);
const rounds = Number(process.argv[3] ?? 4);
const latencyMs = Number(process.argv[4] ?? 150);
const batch = Math.max(1, Math.ceil(perSide / rounds));

interface Side {
  depth: number;
  searches: number;
  failed: number;
  requests: number;
  wallMs: number;
}

const google = await startFakeGoogle({ latencyMs });
const data = tempDataDir('bench-depth');
const svc = await startService(data, { SERP_GOOGLE_ORIGIN: google.origin });
try {
  const key = JSON.parse(
    await cli(['keys', 'create', '--tier', 'enterprise', '--quota', '0', '--rate', '100000', '--json', '--data', data]),
  ).key as string;

  /** one batch of fresh keywords at `depth`: submitted at once, polled until each ends */
  const runBatch = async (side: Side, round: number) => {
    const keywords = Array.from({ length: batch }, (_, i) => `depth bench ${side.depth} r${round} k${i}`);
    const before = google.searches().length;
    const started = performance.now();
    const outcomes = await Promise.all(
      keywords.map(async (keyword) => {
        const res = await submit(svc.url, key, { keyword, depth: side.depth, capture_aio: false });
        if (res.status !== 202) return false;
        const { job_id } = (await res.json()) as { job_id: string };
        const done = await pollJob(svc.url, key, job_id, 'html', 300_000);
        const body = (await done.json()) as { status?: string };
        return done.status === 200 && body.status === 'done';
      }),
    );
    side.wallMs += performance.now() - started;
    side.requests += google.searches().length - before;
    side.searches += outcomes.length;
    side.failed += outcomes.filter((ok) => !ok).length;
  };

  const shallow: Side = { depth: 10, searches: 0, failed: 0, requests: 0, wallMs: 0 };
  const deep: Side = { depth: 100, searches: 0, failed: 0, requests: 0, wallMs: 0 };
  // warm up both paths (parser, geo, sockets) outside the figures
  await runBatch({ ...shallow }, -1);
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? [shallow, deep] : [deep, shallow];
    for (const side of order) await runBatch(side, round);
  }

  const row = (s: Side) =>
    `depth ${String(s.depth).padStart(3)}: ${s.searches} searches, ${s.failed} failed, ${s.requests} Google requests (${(s.requests / Math.max(1, s.searches)).toFixed(2)} a search), ${(s.wallMs / 1000).toFixed(1)} s, ${((s.searches / Math.max(1, s.wallMs)) * 60_000).toFixed(0)} searches/min`;
  console.log(
    `\nDepth benchmark: ${rounds} rounds of ${batch} fresh top-10 searches a side, sides alternated; Google answers each page after ${latencyMs} ms`,
  );
  console.log(row(shallow));
  console.log(row(deep));
  if (shallow.failed > 0 || deep.failed > 0) {
    console.log('no ratio: a side had failures');
  } else {
    console.log(
      `depth 100 / depth 10: Google requests ${(deep.requests / Math.max(1, shallow.requests)).toFixed(2)}x, wall time ${(deep.wallMs / Math.max(1, shallow.wallMs)).toFixed(2)}x`,
    );
  }
} finally {
  await svc.stop();
  await google.close();
  removeDir(data);
}
