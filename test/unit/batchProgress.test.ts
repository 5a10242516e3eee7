import t from 'tap';
import { type BatchProgress, etaOf, progressLine, summaryLine } from '../../services/cli/progress.js';

/**
 * The batch's progress line compares like with like: this run's submits per minute beside the key's limit (which
 * counts submits), and the keywords done per minute apart. A resumed batch finishes keywords it only polls, and a
 * cached answer finishes at once: those once made "379.7/min (key: 10/min)".
 */
const resumed: BatchProgress = {
  total: 400,
  finished: 390,
  failed: 2,
  submits: 10,
  cached: 4,
  finishedBefore: 0,
  elapsedMs: 60_000,
  rate: 10,
};

t.test('submits per minute beside the key limit, keywords done per minute apart', async (t) => {
  const line = progressLine(resumed);
  t.match(line, /submits 10\.0\/min \(key allows 10\/min; 4 from cache\)/, 'comparable: both count submits');
  t.match(line, /done 390\.0\/min/, 'the keywords finished, polled ones included, on their own');
  t.notMatch(line, /390\.0\/min \(key/, 'never the keywords done against the key limit');
  t.match(line, /^batch: 390\/400 done, 2 failed \| /);
  t.equal(etaOf(resumed), '1 min');
  t.equal(etaOf({ ...resumed, finished: 0, submits: 0 }), '?', 'no pace yet');
  t.match(
    summaryLine(resumed, 'out.jsonl'),
    /^batch: 390\/400 keywords done \(2 failed\) in 60\.0 s: 10 submits at 10\.0\/min \(key allows 10\/min; 4 from cache\), 390\.0 keywords done\/min; results in out\.jsonl$/,
  );
});

t.test('a resumed batch counts only what this run finished', async (t) => {
  const p = { ...resumed, finished: 300, finishedBefore: 290, submits: 10 };
  t.match(progressLine(p), /done 10\.0\/min/);
});
