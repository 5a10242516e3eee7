import t from 'tap';
import type { JobStatusDoc } from '../../projections/jobStatus/jobStatus.js';
import { withinBudget } from '../../services/answers/render.js';

/**
 * The HTTP thread waits for the pipeline thread's rendering of a finished result only within a budget
 * (docs/architecture.md#embedded-mode-serp-api-serve-the-default): past it, it renders the answer itself.
 */
const job = { jobId: 'a'.repeat(24), status: 'done' } as JobStatusDoc;
const answer = { json: Buffer.from('{"ok":true}'), etag: '"e"' };
const after = <T>(ms: number, value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), ms));

t.test('an answer the other thread renders within the budget is used', async (t) => {
  const render = withinBudget(() => after(1, answer), 200);
  t.same(await render(job, 'json', { baseUrl: 'http://127.0.0.1' }), answer);
});

t.test('an answer later than the budget is not waited for: the caller renders itself', async (t) => {
  let settled = false;
  const slow = after(1_000, answer).finally(() => {
    settled = true;
  });
  const render = withinBudget(() => slow, 20);
  const t0 = performance.now();
  t.equal(await render(job, 'json', { baseUrl: 'http://127.0.0.1' }), undefined, 'nothing from the other thread');
  const took = performance.now() - t0;
  t.ok(took < 900, `it gave up after ${took.toFixed(0)} ms, not when the slow answer came`);
  t.notOk(settled, 'the other thread had not answered yet');
});

t.test('an other thread that fails is the same as one that has no result', async (t) => {
  const render = withinBudget(() => Promise.reject(new Error('thread ended')), 200);
  t.equal(await render(job, 'json', { baseUrl: 'http://127.0.0.1' }), undefined);
});
