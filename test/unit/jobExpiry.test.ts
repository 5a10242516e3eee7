import t from 'tap';
import type { JobStatusDoc } from '../../projections/jobStatus/jobStatus.js';
import { isExpired, isGone } from '../../services/api/jobs.js';

/**
 * When a job answers 410 (docs/api.md, SERP_RETENTION_DAYS): past the retention period, once retention purged it, or
 * when it was answered from the cache by a job retention has purged since.
 */
const DAY = 86_400_000;
const submittedAt = '2026-12-01T00:00:00.000Z';
const job = (over: Partial<JobStatusDoc> = {}) =>
  ({ jobId: 'j1', status: 'done', submittedAt, ...over }) as JobStatusDoc;
const now = Date.parse(submittedAt);

t.test('job expiry › by age or by purge', async (t) => {
  t.notOk(isExpired(job(), 30, now + 30 * DAY), 'thirty days old with 30 days kept: still there');
  t.ok(isExpired(job(), 30, now + 30 * DAY + 1), 'a millisecond more: gone');
  t.ok(
    isExpired(job({ purgedAt: '2026-12-02T00:00:00.000Z' }), 365, now + DAY),
    'purged: gone, whatever the setting now',
  );
});

t.test('job expiry › an answer from the cache goes with its source', async (t) => {
  const copy = job({ jobId: 'j2', sourceJobId: 'j1', submittedAt: new Date().toISOString() });
  t.notOk(isGone(copy, job({ submittedAt: new Date().toISOString() }), 30), 'its source still kept: answered');
  t.ok(isGone(copy, job({ purgedAt: new Date().toISOString() }), 30), 'its source purged: gone too');
  t.notOk(isGone(job({ submittedAt: new Date().toISOString() }), undefined, 30), 'a job of its own, recent: answered');
});
