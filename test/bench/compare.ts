/**
 * What every bench that prints a ratio shares (docs/benchmarks.md): the two sides run round by round in alternating
 * order, so neither always meets the warmer (or the busier) machine; each figure carries the failures it was measured
 * with (non-2xx answers, errors, timeouts, jobs that did not finish as done); and a ratio is printed only when
 * neither side had any: a side that answered errors faster did not do the same work. Figures only: a bench never
 * asserts a time.
 */
import { availableParallelism, loadavg } from 'node:os';
import type autocannon from 'autocannon';

/** One measured figure and the failures under it. */
export interface Figure {
  value: number;
  failures: number;
}

/**
 * Runs every side once per round, in the given order on even rounds and reversed on odd ones; returns each side's
 * results in round order. `onRound` sees a round's results as soon as it is over (to print it); `firstRound` numbers
 * the rounds from another start, so a bench that calls this once per setting still alternates across settings.
 */
export const alternate = async <S extends Record<string, (round: number) => Promise<unknown>>>(
  rounds: number,
  sides: S,
  onRound?: (round: number, results: { [K in keyof S]: Awaited<ReturnType<S[K]>> }) => void,
  firstRound = 0,
): Promise<{ [K in keyof S]: Awaited<ReturnType<S[K]>>[] }> => {
  type Results = { [K in keyof S]: Awaited<ReturnType<S[K]>> };
  const names = Object.keys(sides) as (keyof S)[];
  const out = Object.fromEntries(names.map((n) => [n, []])) as unknown as { [K in keyof S]: Results[K][] };
  for (let round = firstRound; round < firstRound + rounds; round++) {
    const order = round % 2 === 0 ? names : [...names].reverse();
    const results = {} as Results;
    for (const name of order) results[name] = (await sides[name]!(round)) as Results[typeof name];
    for (const name of names) out[name].push(results[name]);
    onRound?.(round, results);
  }
  return out;
};

/**
 * `a / b` as "1.23×", or why there is no ratio: either side had failures, or `b` is zero. `names` say which side
 * failed.
 */
export const ratio = (a: Figure, b: Figure, names: [string, string] = ['A', 'B']): string => {
  const failed = [a, b].flatMap((f, i) => (f.failures > 0 ? [`${names[i]} had ${f.failures} failures`] : []));
  if (failed.length) return `no ratio (${failed.join(', ')})`;
  if (!(b.value > 0) || !Number.isFinite(a.value)) return `no ratio (${names[1]} measured ${b.value})`;
  return `${(a.value / b.value).toFixed(2)}×`;
};

/** Prints `label: a / b = ratio`, or the refusal, on a line of its own. */
export const printRatio = (label: string, a: Figure, b: Figure, names: [string, string] = ['A', 'B']): void => {
  console.log(`${label}: ${ratio(a, b, names)}`);
};

/** The sum of a side's figures over its rounds (values summed, failures summed). */
export const total = (figures: Figure[]): Figure => ({
  value: figures.reduce((n, f) => n + f.value, 0),
  failures: figures.reduce((n, f) => n + f.failures, 0),
});

/** The median value of a side's figures, with every failure of every round under it. */
export const medianOf = (figures: Figure[]): Figure => ({
  value: quantile(
    figures.map((f) => f.value),
    0.5,
  ),
  failures: total(figures).failures,
});

/** The q-quantile of `xs` (nearest rank; 0 when empty). */
export const quantile = (xs: number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] ?? 0;
};

/** An autocannon run as a figure: requests per second, failing on every non-2xx answer, error and timeout. */
export const requestsPerSecond = (r: autocannon.Result): Figure => ({
  value: r.requests.average,
  failures: r.non2xx + r.errors + r.timeouts,
});

/** One autocannon run as a table row: req/s, p50, p99 and what failed. */
export const autocannonRow = (name: string, r: autocannon.Result, width = 44): string =>
  `${name.padEnd(width)} ${r.requests.average.toFixed(0).padStart(8)} req/s   p50 ${String(r.latency.p50).padStart(4)} ms   p99 ${String(r.latency.p99).padStart(5)} ms   non-2xx ${r.non2xx}   errors ${r.errors + r.timeouts}`;

/**
 * How a finished job counts: done or not (a failed or partial job, or one still running at the deadline, is counted
 * as not done, never as done), and the pages it fetched, from its metadata (`pages_fetched`).
 */
export const jobOutcome = async (
  url: string,
  key: string,
  jobId: string,
  timeoutMs: number,
): Promise<{ done: boolean; status: string; pages: number }> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await fetch(`${url}/v1/search/${jobId}?output=json`, { headers: { 'x-api-key': key } });
    if (res.status === 202 && Date.now() < deadline) {
      await res.arrayBuffer();
      await new Promise((r) => setTimeout(r, 100));
      continue;
    }
    const body = (await res.json().catch(() => ({}))) as {
      search_metadata?: { status?: string; pages_fetched?: number };
    };
    const status = res.status === 200 ? (body.search_metadata?.status ?? 'unknown') : `HTTP ${res.status}`;
    return { done: status === 'done', status, pages: body.search_metadata?.pages_fetched ?? 0 };
  }
};

/** The machine's load as one line, to print beside figures measured on a shared machine. */
export const machineNote = (): string =>
  `load average ${loadavg()[0]?.toFixed(1)} (1 min) on ${availableParallelism()} cores`;

/** `--name N` from the command line as a number, or `fallback` when absent */
export const numberArg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
