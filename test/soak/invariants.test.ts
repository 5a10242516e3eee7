import t from 'tap';
import { checkReads, checkUsage } from './invariants.js';
import type { JobRecord, Journal } from './journal.js';
import { parseServerTiming, type Read } from './traffic.js';

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

/**
 * The reads line says where the slow reads' time went (docs/operations.md#the-soak), from the Server-Timing each
 * answer carried (docs/api.md#server-timing): an operator tells a read that waited in the service from one that
 * waited for a core.
 */
t.test("the soak's reads line says where the slow reads' time went", async (t) => {
  const read = (ms: number, route: string, header?: string): Read => ({
    at: 0,
    ms,
    route,
    harnessLagMs: 0,
    ...(header ? { serverTiming: parseServerTiming(header) } : {}),
  });
  const idle = Array.from({ length: 100 }, () =>
    read(10, 'read result', 'job;dur=0.1, answer;desc=stored, total;dur=0.2, request;dur=0.4'),
  );
  const during = [
    ...Array.from({ length: 90 }, () => read(12, 'read result', 'job;dur=0.1, answer;desc=stored, total;dur=0.2')),
    read(300, 'read result', 'job;dur=0.1, answer;desc=stored, total;dur=0.1, request;dur=0.5'),
    read(320, 'read usage', 'own-writes;dur=290.5, total;dur=291.0, request;dur=291.4'),
    read(250, 'read monitors'),
  ];
  const r = checkReads(idle, during);
  t.equal(r.ok, false, 'a p99 past twice idle breaks it');
  t.match(
    r.summary,
    /read result 1, median 300\.0 ms of which in the handler 0\.1 ms .*since the server took it 0\.5 ms.*answer: stored 1/,
  );
  t.match(r.summary, /read usage 1, median 320\.0 ms .*own-writes 290\.5 ms \(1\)/, "a usage read's wait is named");
  t.match(r.summary, /read monitors 1, median 250\.0 ms/, 'a read without the header is still counted');
  t.same(parseServerTiming('answer;desc="stored", total;dur=1.5'), { answer: { desc: 'stored' }, total: { dur: 1.5 } });
});
