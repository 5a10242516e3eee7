import { join } from 'node:path';
import t from 'tap';
import type { ParsedSerp } from '../../contracts/result.js';
import { alertsOfRun, type DomainState } from '../../domain/monitor/alerts.js';
import { rankDomains } from '../../domain/monitor/ranking.js';
import { allProjections, readModelQueries } from '../../projections/index.js';
import { createSqliteEventStore } from '../../services/adapters/eventStore/sqlite.js';
import { createSqliteReadModelStore } from '../../services/adapters/readModel/sqlite.js';
import { createProjector, rebuildReadModels } from '../../services/projector/projector.js';
import { removeDir, tempDataDir } from '../support/service.js';

/**
 * A monitor with pixel positions (docs/rank-tracking.md): what the fold makes of a check (the best result's place),
 * the `fell_below_fold` alert, and the history and visibility projected from checks that carry it, rebuilt the same.
 */

const organic = (position: number, link: string, pixels?: number | null) => ({
  position,
  title: `result ${position}`,
  link,
  ...(pixels === undefined ? {} : { pixels_from_top: pixels, above_the_fold: pixels !== null && pixels < 800 }),
});
const serp = (results: ReturnType<typeof organic>[]) =>
  ({ organic_results: results, serp_features: {}, information: {} }) as unknown as ParsedSerp;

t.test("a check measured in pixels carries the best result's place, and an unmeasured one none", async (t) => {
  const placed = serp([
    organic(1, 'https://rival.com/a', 420),
    organic(2, 'https://example.com/x', 950),
    organic(3, 'https://example.com/y', 1200),
    organic(11, 'https://late.org/', null),
  ]);
  const ranks = rankDomains(placed, ['example.com', 'rival.com', 'late.org', 'absent.net'], 100, true);
  t.match(ranks[0], { domain: 'example.com', position: 2, pixelsFromTop: 950, aboveTheFold: false }, 'below the fold');
  t.match(
    ranks[1],
    { domain: 'rival.com', position: 1, pixelsFromTop: 420, aboveTheFold: true },
    'on the first screen',
  );
  t.match(ranks[2], { domain: 'late.org', position: 11, pixelsFromTop: null, aboveTheFold: false }, 'a later page');
  t.strictSame(
    ranks[3],
    { domain: 'absent.net', features: [], pixelsFromTop: null, aboveTheFold: false },
    'not ranked: no place',
  );
  const plain = rankDomains(placed, ['example.com'], 100);
  t.notOk('aboveTheFold' in plain[0]! || 'pixelsFromTop' in plain[0]!, 'a monitor without pixel positions: none');
});

t.test(
  'fell_below_fold fires when the best result leaves the first screen between two measured searches',
  async (t) => {
    const state = (position: number, aboveTheFold?: boolean): DomainState => ({
      position,
      url: 'https://example.com/x',
      features: [],
      ...(aboveTheFold === undefined ? {} : { aboveTheFold }),
    });
    const compare = (before: DomainState, after: DomainState, config = { fell_below_fold: true }) =>
      alertsOfRun(
        'run_1',
        config,
        ['example.com'],
        [
          {
            keyword: 'cistern',
            at: '2026-03-02T00:00:00.000Z',
            before: new Map([['example.com', before]]),
            after: new Map([['example.com', after]]),
          },
        ],
        [],
      );
    const fell = compare(state(2, true), state(2, false));
    t.equal(fell.length, 1, 'one alert, at the same position (something pushed it down)');
    t.match(fell[0], {
      kind: 'fell_below_fold',
      keyword: 'cistern',
      domain: 'example.com',
      fromPosition: 2,
      toPosition: 2,
    });
    t.equal(compare(state(3, false), state(2, false)).length, 0, 'already below: nothing');
    t.equal(compare(state(5, false), state(1, true)).length, 0, 'rising above the fold: nothing');
    t.equal(compare(state(2), state(2, false)).length, 0, 'the search before was not measured: nothing');
    t.equal(
      compare(state(2, true), state(2, false), {} as { fell_below_fold: boolean }).length,
      0,
      'not asked: nothing',
    );
    t.equal(compare(state(2, true), state(0, false)).length, 1, 'dropping out of the results also leaves the screen');
  },
);

t.test('history points and visibility carry the fold, and a rebuild gives the same', async (t) => {
  const dir = tempDataDir('rank-fold');
  t.teardown(() => removeDir(dir));
  const eventStore = createSqliteEventStore({ path: join(dir, 'events.db') });
  const check = (keyword: string, at: string, ranks: unknown[], runId = 'run_a') =>
    eventStore.appendToStream(`monitorRun-${runId}`, [
      {
        type: 'MonitorKeywordChecked',
        data: {
          runId,
          monitorId: 'mon_fold',
          keyword,
          jobId: `job_${keyword}_${at}`,
          checkedAt: at,
          ok: true,
          ranks,
          recordedAt: at,
        },
      },
    ]);
  const day = '2026-03-02T';
  await check('a', `${day}01:00:00.000Z`, [
    {
      domain: 'example.com',
      position: 1,
      url: 'https://example.com/',
      features: [],
      pixelsFromTop: 300,
      aboveTheFold: true,
    },
  ]);
  await check('b', `${day}01:05:00.000Z`, [
    {
      domain: 'example.com',
      position: 4,
      url: 'https://example.com/b',
      features: [],
      pixelsFromTop: 1400,
      aboveTheFold: false,
    },
  ]);
  await check('c', `${day}01:10:00.000Z`, [
    { domain: 'example.com', features: [], pixelsFromTop: null, aboveTheFold: false },
  ]);
  // a search not measured (a render that failed): a keyword of the day, not of the share
  await check('d', `${day}01:15:00.000Z`, [
    { domain: 'example.com', position: 2, url: 'https://example.com/d', features: [] },
  ]);

  const store = createSqliteReadModelStore(join(dir, 'read.db'));
  const projector = createProjector({ eventStore, readModels: store, projections: allProjections });
  await projector.start();
  await projector.waitFor(await eventStore.headPosition());
  await projector.stop();
  const q = readModelQueries(store);
  const points = [...q.ranks.points('mon_fold', { from: 0, to: 8.64e15 }, {})].flat();
  t.match(
    points.map((p) => [p.keyword, p.pixels_from_top, p.above_the_fold]),
    [
      ['a', 300, true],
      ['b', 1400, false],
      ['c', null, false],
      ['d', undefined, undefined],
    ],
    'each point says where its best result lay; the unmeasured one says nothing',
  );
  t.notOk('above_the_fold' in points[3]!, 'an unmeasured point has no fold field at all');
  const visibility = q.ranks.visibility('mon_fold', { from: 0, to: 8.64e15 });
  const acc = visibility.byDomain.get('example.com')?.get('2026-03-02');
  t.match(
    acc,
    { ranked: 3, measured: 3, aboveFold: 1, sumPosition: 7 },
    'one of the three measured keywords above the fold',
  );
  t.equal(visibility.keywordsOfDay.get('2026-03-02'), 4, 'the unmeasured search is still a keyword of the day');

  const views = (s: typeof store) => s.dump().filter((d) => d.view === 'rankHistory' || d.view === 'rankDays');
  const before = views(store);
  await rebuildReadModels(eventStore, store, allProjections);
  t.same(views(store), before, 'projections rebuild: the same history and day documents');
});
