/**
 * The batch's progress in comparable terms: the key's limit counts submits per minute, so the line sets this run's
 * submits per minute beside it, and the keywords finished per minute apart (those include keywords a resumed batch
 * only polls, and answers from the cache, which finish at once).
 */
export interface BatchProgress {
  total: number;
  finished: number;
  failed: number;
  /** submits this run (each counts against the key's per-minute limit) */
  submits: number;
  /** of those, answered from the cache */
  cached: number;
  /** keywords finished before this run started (a resumed batch) */
  finishedBefore: number;
  elapsedMs: number;
  /** the key's submits per minute */
  rate: number;
}

const perMinute = (n: number, ms: number) => (n / Math.max(1, ms)) * 60_000;

export const submitsPerMinute = (p: BatchProgress) => perMinute(p.submits, p.elapsedMs);
export const donePerMinute = (p: BatchProgress) => perMinute(p.finished - p.finishedBefore, p.elapsedMs);

/** Minutes left at the pace of the last minutes, or '?' before anything finished. */
export const etaOf = (p: BatchProgress): string => {
  const pace = donePerMinute(p);
  return pace > 0 ? `${Math.ceil((p.total - p.finished) / pace)} min` : '?';
};

/** One plain progress line (stderr not a terminal). */
export const progressLine = (p: BatchProgress): string =>
  `batch: ${p.finished}/${p.total} done, ${p.failed} failed | submits ${submitsPerMinute(p).toFixed(1)}/min ` +
  `(key allows ${p.rate}/min; ${p.cached} from cache) | done ${donePerMinute(p).toFixed(1)}/min | ETA ${etaOf(p)}`;

/** The last line of a batch. */
export const summaryLine = (p: BatchProgress, out: string): string =>
  `batch: ${p.finished}/${p.total} keywords done (${p.failed} failed) in ${(p.elapsedMs / 1000).toFixed(1)} s: ` +
  `${p.submits} submits at ${submitsPerMinute(p).toFixed(1)}/min (key allows ${p.rate}/min; ${p.cached} from cache), ` +
  `${donePerMinute(p).toFixed(1)} keywords done/min; results in ${out}`;
