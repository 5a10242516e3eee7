import t from 'tap';
import { currentRoutes, runningFleet } from '../../services/fairShare/capacity.js';

const row = (route: string, reportedAt: string, proxy?: string) => ({ route, reportedAt, ...(proxy ? { proxy } : {}) });

t.test('the running fleet › routes named as the crawler names them', async (t) => {
  const since = new Date('2026-12-07T10:00:00Z');
  t.same(runningFleet(['http://u:secret@127.0.0.1:9001', 'http://127.0.0.1:9002'], since), {
    routes: [
      { route: 'proxy-1', proxy: '127.0.0.1:9001' },
      { route: 'proxy-2', proxy: '127.0.0.1:9002' },
    ],
    since: '2026-12-07T10:00:00.000Z',
  });
  t.notMatch(JSON.stringify(runningFleet(['http://u:secret@127.0.0.1:9001'])), /secret/, 'never its credentials');
  t.same(runningFleet([], since).routes, [{ route: 'direct' }], 'no proxies: the direct route');
});

t.test('the running fleet › routes of a run before a restart leave', async (t) => {
  const before = '2026-12-07T09:40:00.000Z';
  const after = '2026-12-07T10:05:00.000Z';
  const rows = [
    row('proxy-1', before, '127.0.0.1:9001'),
    row('proxy-2', before, '127.0.0.1:9002'),
    row('proxy-3', before, '127.0.0.1:9003'),
  ];
  const one = runningFleet(['http://127.0.0.1:9001'], new Date('2026-12-07T10:00:00Z'));
  t.same(
    currentRoutes(rows, one).map((r) => r.route),
    ['proxy-1'],
    'one proxy now: the other two are gone',
  );
  const moved = runningFleet(['http://127.0.0.1:9999'], new Date('2026-12-07T10:00:00Z'));
  t.same(currentRoutes(rows, moved), [], 'proxy-1 is another proxy now: its old reports are not it');
  const none = runningFleet([], new Date('2026-12-07T10:00:00Z'));
  t.same(currentRoutes(rows, none), [], 'no proxies now: none of them');
  t.same(
    currentRoutes([...rows, row('proxy-7', after, '10.0.0.7:3128')], none).map((r) => r.route),
    ['proxy-7'],
    'a route another process of the fleet reported since the start counts',
  );
  t.equal(currentRoutes(rows, undefined).length, 3, 'the fleet not known: every route of the hour');
});
