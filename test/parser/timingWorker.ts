import { parentPort, workerData } from 'node:worker_threads';
import fc from 'fast-check';
import { parseDocument } from '../../parser/dom/index.js';
import { parse } from '../../parser/index.js';
import { page } from './malformed.js';

/**
 * Parse times, measured in a thread of their own so that the test can end a parse that does not finish
 * (tokenizer.test.ts). Each figure is the best of `samples` runs (a loaded machine slows some runs, never all).
 */

export interface Timed {
  label: string;
  bytes: number;
  /** document tree only, and the whole parser (classification, features), in ms */
  domMs: number;
  parseMs: number;
}

const best = (samples: number, fn: () => void): number => {
  let min = Number.POSITIVE_INFINITY;
  for (let i = 0; i < samples; i++) {
    const t0 = performance.now();
    fn();
    min = Math.min(min, performance.now() - t0);
  }
  return min;
};

const ms = (t: Timed): number => t.domMs + t.parseMs;

const time = (label: string, html: string, samples: number): Timed => ({
  label,
  bytes: html.length,
  domMs: best(samples, () => parseDocument(html)),
  parseMs: best(samples, () => parse(html, { captureAio: true })),
});

/** Well-formed markup of the same size: the linear baseline a malformed page is held to. */
const wellFormed = (bytes: number): string => {
  const unit =
    '<div class="r" id="x1"><a href="/url?q=https://e.com/&amp;sa=U">Title</a><span>snippet text</span></div>';
  return unit.repeat(Math.ceil(bytes / unit.length)).slice(0, bytes);
};

type Task =
  | { kind: 'cases'; cases: Array<{ label: string; html: string }>; samples: number }
  | {
      kind: 'pages';
      bytes: number;
      runs: number;
      samples: number;
      seed: number;
      /** a page slower than max(floorMs, ratio × the baseline) is timed again, twice at most, and its best kept */
      floorMs: number;
      ratio: number;
    };

const run = (task: Task): Timed[] => {
  if (task.kind === 'cases') return task.cases.map((c) => time(c.label, c.html, task.samples));
  const out: Timed[] = [];
  // the baseline is measured before and after the generated pages (once first to warm the code up), and the
  // slower of the two kept
  const baseline = () => time('well-formed baseline', wellFormed(task.bytes), task.samples);
  baseline();
  const before = baseline();
  const pages = fc.sample(page(task.bytes), { numRuns: task.runs, seed: task.seed });
  pages.forEach((html, i) => {
    out.push(time(`generated page ${i}`, html, task.samples));
  });
  const after = baseline();
  const base = ms(before) >= ms(after) ? before : after;
  const bound = Math.max(task.floorMs, task.ratio * ms(base));
  out.forEach((timed, i) => {
    for (let again = 0; again < 2 && ms(out[i] as Timed) > bound; again++) {
      const retimed = time(timed.label, pages[i] as string, task.samples);
      if (ms(retimed) < ms(out[i] as Timed)) out[i] = retimed;
    }
  });
  return [base, ...out];
};

parentPort?.postMessage(run(workerData as Task));
