import t from 'tap';
import { checkUsage } from './invariants.js';
import type { JobRecord, Journal } from './journal.js';

/**
 * The soak's usage invariant holds the service to the documents' charging rules (docs/depth.md#what-is-charged): a
 * search still placed elsewhere after its retry gives its quota back as a failed one does
 * (docs/locations.md#the-retry), so a release for it is expected, and a missing one is a leak.
 */
const job = (id: string, ends: JobRecord['ends']): JobRecord => ({
  id,
  keyId: 'k1',
  keyword: 'coffee',
  lane: 'live',
  depth: 10,
  charged: true,
  submittedAt: 0,
  starts: 1,
  ends,
});

const journalOf = (jobs: JobRecord[], released: string[]): Journal => ({
  jobs: new Map(jobs.map((j) => [j.id, j])),
  reserved: new Map([['k1', new Map(jobs.map((j) => [j.id, 1]))]]),
  released: new Map([['k1', new Map(released.map((id) => [id, 1]))]]),
  runsCompleted: new Map(),
  events: 0,
  catchUp: async () => undefined,
});

const done = job('a', [{ type: 'CrawlCompleted', status: 'done', at: 1 }]);
const elsewhere = job('b', [{ type: 'CrawlCompleted', status: 'partial', at: 1, kind: 'placed_elsewhere' }]);
const blocked = job('c', [{ type: 'CrawlCompleted', status: 'partial', at: 1 }]);
const view = (used: number, expected: number) => ({
  label: 'live',
  keyId: 'k1',
  used,
  expected,
  unknown: 0,
  unread: [],
});

t.test('the soak’s usage invariant', async (t) => {
  t.test('a search placed elsewhere whose quota came back holds it', async (t) => {
    const r = checkUsage(journalOf([done, elsewhere, blocked], ['b']), [view(2, 2)]);
    t.equal(r.ok, true, r.evidence.join('; '));
  });
  t.test('one placed elsewhere whose quota never came back breaks it, by name', async (t) => {
    const r = checkUsage(journalOf([done, elsewhere, blocked], []), [view(3, 2)]);
    t.equal(r.ok, false);
    t.match(r.evidence.join('\n'), /b ended placed elsewhere and its reservation was never released/);
  });
  t.test('a partial search that was placed right and released anyway breaks it', async (t) => {
    const r = checkUsage(journalOf([done, elsewhere, blocked], ['b', 'c']), [view(1, 2)]);
    t.equal(r.ok, false);
    t.match(r.evidence.join('\n'), /c released though it ended partial/);
  });
});
