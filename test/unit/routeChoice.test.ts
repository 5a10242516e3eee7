import t from 'tap';
import type { LocationCheck } from '../../contracts/events.js';
import {
  adviseRoutes,
  EXPLORE_EVERY,
  honourRate,
  placeKeyOf,
  type RouteRecord,
  recordPage,
  setAside,
} from '../../domain/location/routeChoice.js';
import type { DocReader, ProjectedEvent } from '../../projections/projection.js';
import { routePlacementsQueries } from '../../projections/routePlacements/queries.js';
import {
  type RoutePlacementsDoc,
  routePlacementsProjection,
} from '../../projections/routePlacements/routePlacements.js';

/** A crawl's end as the log records it, with the pages it judged (docs/locations.md#the-check). */
const completed = (requested: string | undefined, placements: LocationCheck['placements']): ProjectedEvent =>
  ({
    type: 'CrawlCompleted',
    streamName: 'searchJob-x',
    globalPosition: 1,
    recordedAt: '2026-12-07T10:00:00.000Z',
    data: {
      jobId: 'x',
      status: 'done',
      pages: [],
      rawHtmlRef: { key: 'k', sha256: 's', bytes: 1 },
      parserVersion: 'v',
      cacheKey: 'c',
      blocks: 0,
      locationCheck: { status: 'matched', ...(requested ? { requested } : {}), retries: 0, placements },
      completedAt: '2026-12-07T10:00:00.000Z',
    },
  }) as ProjectedEvent;

const fold = (events: ProjectedEvent[]) => {
  const docs = new Map<string, RoutePlacementsDoc>();
  for (const e of events) {
    const id = routePlacementsProjection.idOf(e);
    if (!id) continue;
    const next = routePlacementsProjection.evolve(docs.get(id), e);
    if (next) docs.set(id, next);
    else docs.delete(id);
  }
  return docs;
};

const record = (pages: boolean[]): RouteRecord | undefined =>
  pages.reduce<RouteRecord | undefined>((r, honoured) => recordPage(r, honoured), undefined);

t.test('placeKeyOf › a canonical name is its country and level', async (t) => {
  t.same(placeKeyOf('Austin,Texas,United States'), { country: 'United States', level: 'city' });
  t.same(placeKeyOf('Texas,United States'), { country: 'United States', level: 'region' });
  t.same(placeKeyOf('United States'), { country: 'United States', level: 'country' });
  t.same(placeKeyOf('Paris,Paris,Ile-de-France,France'), { country: 'France', level: 'city' });
});

t.test('routePlacements › folds each place’s routes from the placements, unverified pages aside', async (t) => {
  const docs = fold([
    completed('Austin,Texas,United States', [
      { route: 'proxy-2', start: 0, status: 'mismatched', detected: 'Chicago, Illinois' },
      { route: 'proxy-1', start: 0, status: 'matched' },
    ]),
    completed('Denver,Colorado,United States', [{ route: 'proxy-3', start: 0, status: 'country_only' }]),
    completed('United States', [{ route: 'proxy-3', start: 0, status: 'matched' }]),
    completed('Austin,Texas,United States', [{ route: 'proxy-4', start: 0, status: 'unverified' }]),
    completed(undefined, [{ route: 'proxy-4', start: 0, status: 'unverified' }]),
  ]);
  t.same([...docs.keys()].sort(), ['United States|city', 'United States|country']);
  t.same(docs.get('United States|city')!.routes, {
    'proxy-1': { honoured: 1, judged: 1 },
    'proxy-2': { honoured: 0, judged: 1 },
    'proxy-3': { honoured: 0, judged: 1 },
  });
  t.same(docs.get('United States|country')!.routes, { 'proxy-3': { honoured: 1, judged: 1 } });
});

t.test('setAside › a route that keeps misplacing a place is set aside for it', async (t) => {
  const good = record(Array(10).fill(true));
  t.same(setAside({ 'proxy-1': good!, 'proxy-2': record([false, true, false])! }), ['proxy-2'], 'three pages');
  t.same(setAside({ 'proxy-1': good!, 'proxy-2': record([false, false])! }), [], 'two pages are not a record yet');
  const oneInSix = record(Array.from({ length: 30 }, (_, i) => i % 6 !== 0))!;
  t.ok(honourRate(oneInSix) < 0.9, `one in six elsewhere: ${honourRate(oneInSix).toFixed(2)}`);
  t.same(setAside({ 'proxy-1': good!, 'proxy-3': oneInSix }), ['proxy-3']);
  t.same(
    setAside({ 'proxy-1': record([false, false, false, true])!, 'proxy-2': record([false, false, false])! }),
    ['proxy-2'],
    'when every route misplaces, the best still serves',
  );
  t.same(setAside({}), [], 'no record: every route is trusted');
});

t.test('adviseRoutes › avoids the routes set aside, and tries each again one search in 20', async (t) => {
  const records = {
    'proxy-1': record(Array(10).fill(true))!,
    'proxy-2': record(Array(5).fill(false))!,
    'proxy-3': record([false, false, false, true])!,
  };
  const advice = Array.from({ length: 2 * EXPLORE_EVERY }, (_, n) => adviseRoutes(records, n));
  t.same(advice[0], { avoid: ['proxy-2', 'proxy-3'] });
  const explored = advice.filter((a) => a.prefer);
  t.same(explored, [
    { prefer: 'proxy-2', avoid: ['proxy-3'] },
    { prefer: 'proxy-3', avoid: ['proxy-2'] },
  ]);
  t.same(adviseRoutes({ 'proxy-1': records['proxy-1'] }, 0), {}, 'nothing set aside: no advice');
});

t.test('a route set aside recovers once it honours the place again', async (t) => {
  let bad = record(Array(10).fill(false))!;
  const good = record(Array(10).fill(true))!;
  t.same(setAside({ 'proxy-1': good, 'proxy-2': bad }), ['proxy-2']);
  let tries = 0;
  while (setAside({ 'proxy-1': good, 'proxy-2': bad }).length && tries < 100) {
    bad = recordPage(bad, true);
    tries += 1;
  }
  t.ok(tries > 0 && tries < 30, `back after ${tries} honoured pages (one search in ${EXPLORE_EVERY} tries it)`);
});

t.test('routePlacementsQueries › each route’s standing by place', async (t) => {
  const docs = fold([
    completed('Austin,Texas,United States', [
      { route: 'proxy-2', start: 0, status: 'mismatched' },
      { route: 'proxy-1', start: 0, status: 'matched' },
    ]),
    completed('Austin,Texas,United States', [
      { route: 'proxy-2', start: 0, status: 'mismatched' },
      { route: 'proxy-1', start: 0, status: 'matched' },
    ]),
    completed('Austin,Texas,United States', [
      { route: 'proxy-2', start: 0, status: 'region_only' },
      { route: 'proxy-1', start: 0, status: 'matched' },
    ]),
  ]);
  const reader = { list: () => [...docs.values()], get: (_v: string, id: string) => docs.get(id) } as unknown;
  const q = routePlacementsQueries(reader as DocReader);
  t.match(q.standings(), [
    { route: 'proxy-1', country: 'United States', level: 'city', honour: 1, avoided: false },
    { route: 'proxy-2', country: 'United States', level: 'city', avoided: true },
  ]);
  t.ok(q.standings()[1]!.honour < 0.3);
  t.same(Object.keys(q.records({ country: 'United States', level: 'city' })), ['proxy-2', 'proxy-1']);
});
