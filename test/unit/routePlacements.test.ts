import t from 'tap';
import type { LocationCheck } from '../../contracts/events.js';
import { dashboardQueries } from '../../projections/dashboard/queries.js';
import { type RouteHealthDoc, routeHealthProjection } from '../../projections/dashboard/routeHealth.js';
import type { DocReader, ProjectedEvent } from '../../projections/projection.js';

/** A crawl's end as the log records it: its cost by route and the pages it judged (docs/locations.md#the-check). */
const completed = (at: string, routes: string[], placements: LocationCheck['placements']): ProjectedEvent =>
  ({
    type: 'CrawlCompleted',
    streamName: 'searchJob-x',
    globalPosition: 1,
    recordedAt: at,
    data: {
      jobId: 'x',
      status: 'done',
      pages: [],
      rawHtmlRef: { key: 'k', sha256: 's', bytes: 1 },
      parserVersion: 'v',
      cacheKey: 'c',
      blocks: 0,
      cost: {
        requests: 2,
        blocked: 0,
        browserPages: 0,
        bytes: 1,
        routes: routes.map((route) => ({ route, requests: 1, blocked: 0 })),
      },
      locationCheck: { status: 'matched', retries: placements.length - 1, placements },
      completedAt: at,
    },
  }) as ProjectedEvent;

t.test('routeHealth › counts the pages each route placed, and those placed elsewhere', async (t) => {
  const events = [
    completed(
      '2026-11-28T16:05:10.000Z',
      ['proxy-1', 'proxy-2'],
      [
        { route: 'proxy-2', start: 0, status: 'mismatched', detected: 'Chicago, Illinois' },
        { route: 'proxy-1', start: 0, status: 'matched', detected: 'Austin, Texas' },
      ],
    ),
    completed('2026-11-28T16:05:40.000Z', ['proxy-2'], [{ route: 'proxy-2', start: 0, status: 'country_only' }]),
    completed('2026-11-28T16:07:00.000Z', ['proxy-2'], [{ route: 'proxy-2', start: 0, status: 'unverified' }]),
  ];
  let doc: RouteHealthDoc | undefined;
  for (const e of events) {
    t.equal(routeHealthProjection.idOf(e), '2026-11-28T16');
    doc = routeHealthProjection.evolve(doc, e) ?? undefined;
  }
  t.same(doc?.routes['proxy-2']?.minutes, {
    '05': { requests: 2, blocked: 0, placed: 2, misplaced: 2 },
    '07': { requests: 1, blocked: 0, placed: 1, misplaced: 0 },
  });
  t.same(doc?.routes['proxy-1']?.minutes, { '05': { requests: 1, blocked: 0, placed: 1, misplaced: 0 } });

  const docs = {
    get: <T>(view: string, id: string) => (view === 'routeHealth' && id === doc?.hour ? doc : undefined) as T,
  };
  const rows = dashboardQueries(docs as unknown as DocReader).routes(new Date('2026-11-28T16:30:00.000Z'));
  t.match(rows, [
    { route: 'proxy-1', placed: 1, misplaced: 0 },
    { route: 'proxy-2', placed: 3, misplaced: 2 },
  ]);
});

t.test('routeHealth › a crawl judged nothing: its cost only, no placement counts', async (t) => {
  const e = completed('2026-11-28T16:05:10.000Z', ['direct'], []);
  const doc = routeHealthProjection.evolve(undefined, {
    ...e,
    data: { ...e.data, locationCheck: undefined },
  } as ProjectedEvent);
  t.same(doc?.routes.direct?.minutes, { '05': { requests: 1, blocked: 0 } });
});
