import { join } from 'node:path';
import t, { type Test } from 'tap';
import { DEFAULT_CTR_CURVE } from '../../contracts/monitors.js';
import { allProjections, readModelQueries } from '../../projections/index.js';
import type { Range } from '../../projections/rankHistory/queries.js';
import { createSqliteEventStore } from '../../services/adapters/eventStore/sqlite.js';
import { createSqliteReadModelStore } from '../../services/adapters/readModel/sqlite.js';
import type { ReadModelStore } from '../../services/ports/readModelStore.js';
import { createProjector, rebuildReadModels } from '../../services/projector/projector.js';
import { visibilityFromHistory } from '../support/rankVisibility.js';
import { removeDir, tempDataDir } from '../support/service.js';

/**
 * Visibility from the day documents (projections/rankHistory/rankDays.ts) is the visibility computed from the history
 * itself, to the last bit of every sum: over checks of many kinds (several a day, a backfill arriving after later
 * checks, two at the same millisecond, failed ones, a domain added and one no longer measured), for ranges that cut
 * days in two, with the default and another CTR curve; after `projections rebuild`; and with two projectors folding
 * the same log into one file.
 */
const DAY = 86_400_000;
const START = Date.parse('2026-03-30T00:00:00.000Z'); // across a month's end

const makeEvents = () => {
  let seed = 11;
  const rand = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
  const events: Array<{ stream: string; type: 'MonitorKeywordChecked'; data: Record<string, unknown> }> = [];
  let job = 0;
  const check = (keyword: string, at: number, runId: string) => {
    const failed = rand() < 0.15;
    // example.com is measured until day 3, new.org from the middle of day 2 on (a domain new within a day)
    const day = Math.floor((at - START) / DAY);
    const domains = [...(day < 3 ? ['example.com'] : []), 'rival.com', ...(at >= START + 2.5 * DAY ? ['new.org'] : [])];
    events.push({
      stream: `monitorRun-${runId}`,
      type: 'MonitorKeywordChecked',
      data: {
        runId,
        monitorId: 'mon_days',
        keyword,
        jobId: String(job++).padStart(24, '0'),
        checkedAt: new Date(at).toISOString(),
        ok: !failed,
        ...(failed ? { failure: 'captcha' } : {}),
        ranks: domains.map((domain) => {
          const position = Math.floor(rand() * 30);
          const features = rand() < 0.3 ? ['ai_overview_citation'] : [];
          return failed
            ? { domain, features: [] }
            : position === 0
              ? { domain, features }
              : { domain, position, url: `https://${domain}/${position % 3}`, features };
        }),
        recordedAt: new Date(at).toISOString(),
      },
    });
  };
  const keywords = Array.from({ length: 40 }, (_, i) => `keyword ${i}`);
  for (let d = 0; d < 6; d++) {
    for (const keyword of keywords) {
      const n = Math.floor(rand() * 4); // 0–3 searches of the keyword that day
      for (let i = 0; i < n; i++) check(keyword, START + d * DAY + Math.floor(rand() * DAY), `run_d${d}`);
    }
    // two searches of one keyword at the same millisecond: the one recorded later counts
    check('keyword 1', START + d * DAY + 43_200_000, `run_d${d}`);
    check('keyword 1', START + d * DAY + 43_200_000, `run_d${d}`);
  }
  // a backfill: searches made before, recorded after everything else (their days already have later checks)
  for (const keyword of keywords.slice(0, 10)) check(keyword, START + 2 * DAY + Math.floor(rand() * DAY), 'run_b');
  return events;
};

const plain = (v: ReturnType<typeof visibilityFromHistory>) => ({
  byDomain: Object.fromEntries([...v.byDomain].map(([d, days]) => [d, Object.fromEntries([...days].sort())])),
  keywordsOfDay: Object.fromEntries([...v.keywordsOfDay].sort()),
});

const ranges = (): Array<[string, Range]> => {
  const out: Array<[string, Range]> = [
    ['everything', { from: 0, to: 8.64e15 }],
    ['one whole day', { from: START + 2 * DAY, to: START + 3 * DAY - 1 }],
    ['from mid-day to mid-day', { from: START + DAY + 30_000_000, to: START + 4 * DAY + 50_000_000 }],
    ['ending at the same-millisecond searches', { from: START, to: START + 3 * DAY + 43_200_000 }],
    ['before any search', { from: 1, to: START - 1 }],
  ];
  for (let i = 0; i < 10; i++) {
    const a = START + Math.floor((((i * 7919) % 97) / 97) * 6 * DAY);
    out.push([`random ${i}`, { from: a, to: a + Math.floor((((i * 104_729) % 89) / 89) * 4 * DAY) }]);
  }
  return out;
};

const OTHER_CURVE = [0.5, 0.2, 0.1, 0.05, 0.03, 0.01];

const compareAll = (t: Test, store: ReadModelStore, when: string) => {
  const q = readModelQueries(store);
  for (const [what, range] of ranges()) {
    for (const curve of [DEFAULT_CTR_CURVE, OTHER_CURVE]) {
      t.strictSame(
        plain(q.ranks.visibility('mon_days', range, curve)),
        plain(visibilityFromHistory(store, 'mon_days', range, curve)),
        `${when}: ${what}, ${curve === DEFAULT_CTR_CURVE ? 'the default curve' : 'another curve'}`,
      );
    }
  }
};

t.test('visibility from the day documents equals visibility from the history', async (t) => {
  const dir = tempDataDir('rank-days');
  t.teardown(() => removeDir(dir));
  const eventStore = createSqliteEventStore({ path: join(dir, 'events.db') });
  for (const e of makeEvents()) await eventStore.appendToStream(e.stream, [{ type: e.type, data: e.data }]);
  const a = createSqliteReadModelStore(join(dir, 'read.db'));
  const b = createSqliteReadModelStore(join(dir, 'read.db'));
  // two projectors following the log into one file (a CLI beside the service): each event applied once
  const pa = createProjector({ eventStore, readModels: a, projections: allProjections });
  const pb = createProjector({ eventStore, readModels: b, projections: allProjections });
  await Promise.all([pa.start(), pb.start()]);
  const head = await eventStore.headPosition();
  await Promise.all([pa.waitFor(head), pb.waitFor(head)]);
  await Promise.all([pa.stop(), pb.stop()]);

  const everything = readModelQueries(a).ranks.visibility('mon_days', { from: 0, to: 8.64e15 });
  t.equal(everything.keywordsOfDay.size, 6, 'six days with searches');
  t.same([...everything.byDomain.keys()].sort(), ['example.com', 'new.org', 'rival.com'], 'every domain measured');
  t.ok(everything.byDomain.get('example.com')?.has('2026-03-31'), 'example.com measured on day 1');
  t.notOk(everything.byDomain.get('example.com')?.has('2026-04-04'), 'not once it is no longer measured');
  compareAll(t, a, 'live');

  const dayDocs = (s: ReadModelStore) => s.dump().filter((d) => d.view === 'rankDays');
  const before = dayDocs(a);
  t.ok(
    before.length > 6 && before.length <= 6 * 16,
    `one document per day and sixteenth of keywords: ${before.length}`,
  );
  await rebuildReadModels(eventStore, a, allProjections);
  t.same(dayDocs(a), before, 'projections rebuild: the same day documents, byte for byte');
  compareAll(t, a, 'rebuilt');
  a.close();
  b.close();
  await eventStore.close();
});
