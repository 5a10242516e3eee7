import t from 'tap';
import { createCostMeter } from '../../services/crawler/cost.js';
import type { RouteReport } from '../../services/crawler/sessions.js';

/**
 * What a crawl cost in Google requests (docs/fleet.md), as its CrawlCompleted event carries it: every request its
 * fetches and session openings made, by route, with the routes' state when it ended.
 */
t.test('crawl cost › counted by route, with each route as it stood at the end', async (t) => {
  const meter = createCostMeter();
  meter.fetched({ route: 'proxy-1', fetcher: 'http', requests: 2, bytes: 1000, blocked: true });
  meter.opened({ route: 'proxy-2', requests: 1, bytes: 300 });
  meter.fetched({ route: 'proxy-2', fetcher: 'browser', requests: 1, bytes: 5000, blocked: false });
  meter.fetched({ fetcher: 'http', requests: 1, bytes: 700, blocked: false });
  const reports: Record<string, RouteReport> = {
    'proxy-1': {
      route: 'proxy-1',
      proxy: '127.0.0.1:9001',
      rpm: 4,
      coolUntil: Date.parse('2026-12-07T10:05:00Z'),
      lastMinute: 2,
      inFlight: 0,
    },
    'proxy-2': { route: 'proxy-2', proxy: '127.0.0.1:9002', lastMinute: 2, inFlight: 1 },
  };
  const cost = meter.cost({ report: (route) => reports[route] });
  t.same(
    cost,
    {
      requests: 5,
      blocked: 1,
      browserPages: 2,
      bytes: 7000,
      routes: [
        {
          route: 'proxy-1',
          proxy: '127.0.0.1:9001',
          requests: 2,
          blocked: 1,
          rpm: 4,
          coolUntil: '2026-12-07T10:05:00.000Z',
        },
        { route: 'proxy-2', proxy: '127.0.0.1:9002', requests: 2, blocked: 0 },
        { route: 'direct', requests: 1, blocked: 0 },
      ],
    },
    'the totals, a browser’s home-page visit among its pages, and a fetch without a route counted as direct',
  );
  t.same(
    createCostMeter().cost({ report: () => undefined }),
    { requests: 0, blocked: 0, browserPages: 0, bytes: 0, routes: [] },
    'a crawl that fetched nothing cost nothing',
  );
});
