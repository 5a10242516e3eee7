import t from 'tap';
import {
  blocked,
  newRoute,
  PACING_TUNING,
  type PacingPolicy,
  type RouteHealth,
  readyAt,
  sentLastMinute,
  settle,
  spacingOf,
  spend,
  succeeded,
} from '../../services/crawler/pacing.js';

const round = (n: number | undefined) => (n === undefined ? n : Math.round(n * 1000) / 1000);

const policy: PacingPolicy = { ...PACING_TUNING, maxRpm: 20, cooldownBaseMs: 60_000, cooldownMaxMs: 600_000 };

/** sends as fast as the pace allows from `from` for `ms` of a fake clock; the send times */
const sendFor = (r: RouteHealth, from: number, ms: number, p = policy) => {
  const times: number[] = [];
  let route = r;
  for (let t = from; t < from + ms; ) {
    const at = Math.max(t, readyAt(route, p, 1));
    if (at >= from + ms) break;
    route = spend(route, p, 1, at);
    times.push(at);
    t = at;
  }
  return { route, times };
};

/** the most requests of `times` inside any rolling window of `windowMs` (left-open, as a limiter counts them) */
const busiestWindow = (times: number[], windowMs = 60_000) => {
  let most = 0;
  for (let i = 0, j = 0; j < times.length; j++) {
    while (times[i]! <= times[j]! - windowMs) i++;
    most = Math.max(most, j - i + 1);
  }
  return most;
};

t.test('a route paced at r never puts more than r requests into any rolling minute', async (t) => {
  const { times } = sendFor(newRoute(policy), 0, 10 * 60_000);
  t.equal(busiestWindow(times), 20, '20 a minute at most, over ten minutes of back-to-back requests');
  t.ok(times.length >= 190, `and close to the whole pace over time: ${times.length} in 10 minutes`);
  // the arrival of a request may be late by a few ms: the guard keeps the 21st out of the minute anyway
  const jittered = times.map((at, i) => (i % 20 === 0 ? at + 2_000 : at));
  t.equal(busiestWindow(jittered), 20, 'a request arriving 2 s late does not make it 21');
  t.equal(spacingOf(newRoute(policy), policy), 3150, '3 s apart at 20 a minute, plus 5 %');
});

t.test('a reservation of k requests waits for k slots, and settles against what was spent', async (t) => {
  let r = spend(newRoute(policy), policy, 1, 0);
  t.equal(readyAt(r, policy, 1), 3150, 'one request: one spacing after the last');
  t.equal(
    readyAt(r, policy, 3),
    3 * 3150,
    'three at once (a session opening and its page): the route idles for two more',
  );
  r = spend(r, policy, 3, 3 * 3150);
  t.equal(readyAt(r, policy, 1), 6 * 3150, 'the next one goes three spacings later');
  const refunded = settle(r, policy, -1, 6 * 3150);
  t.equal(readyAt(refunded, policy, 1), 5 * 3150, 'an opening that met no challenge gives its spare slot back');
  const charged = settle(r, policy, 1, 6 * 3150);
  t.equal(readyAt(charged, policy, 1), 7 * 3150, 'a redirect followed costs one more slot');
  t.equal(sentLastMinute(charged, 6 * 3150), 5, 'and counts among the requests of the last minute');
});

t.test('a block parks the route for its cooldown, doubling per block in a row, and cuts its pace', async (t) => {
  let r = sendFor(newRoute(policy), 0, 60_000).route;
  t.equal(sentLastMinute(r, 59_000), 20);
  r = blocked(r, policy, 59_000);
  t.equal(r.coolUntil, 119_000, 'parked for 60 s');
  t.equal(readyAt(r, policy, 1), 119_000, 'no request before the cooldown ends');
  t.equal(r.rpm, 10, 'the pace is halved');
  t.equal(round(r.ceiling), 18, 'and 90 % of the pace that was blocked is remembered');
  r = blocked(r, policy, 119_000);
  t.equal(r.coolUntil, 239_000, 'a second block in a row: 120 s');
  t.equal(r.rpm, 4.5, 'halved again, and held under 90 % of that');
  r = succeeded(r, policy, 239_000);
  r = blocked(r, policy, 300_000);
  t.equal(r.coolUntil, 360_000, 'a success ended the streak: back to 60 s');
  const off = blocked(newRoute({ ...policy, maxRpm: 0 }), { ...policy, maxRpm: 0 }, 0);
  t.equal(off.coolUntil, 60_000, 'without pacing the cooldown still applies');
  t.equal(readyAt(off, { ...policy, maxRpm: 0 }, 5), 60_000, 'and nothing else holds a request back');
});

t.test('successes climb back quickly to the ceiling, stay under it while it holds, then probe slowly', async (t) => {
  let r = blocked(sendFor(newRoute(policy), 0, 60_000).route, policy, 59_000);
  t.equal(r.rpm, 10);
  for (let i = 0; i < 8; i++) r = succeeded(r, policy, 120_000 + i);
  t.equal(round(r.rpm), 18, 'one a minute more per success, up to the ceiling');
  for (let i = 0; i < 100; i++) r = succeeded(r, policy, 130_000 + i);
  t.equal(round(r.rpm), 18, 'and no further while the ceiling holds');
  const later = 59_000 + policy.ceilingMs + 1;
  r = succeeded(r, policy, later);
  t.equal(r.ceiling, undefined, 'the ceiling is forgotten after ceilingMs');
  t.ok(r.rpm > 18 && r.rpm < 18.1, `then each success adds 1/rpm (${r.rpm.toFixed(3)})`);
  for (let i = 0; i < 1000; i++) r = succeeded(r, policy, later + i);
  t.equal(r.rpm, 20, 'never past SERP_ROUTE_MAX_RPM');
});

t.test('the ceiling reads what Google saw: a pace set too high is learned from the requests really sent', async (t) => {
  const high = { ...policy, maxRpm: 40 };
  // only 21 requests went in the last minute, though the pace allowed 40: the limit is under 21
  let r = newRoute(high);
  for (let i = 0; i < 21; i++) r = spend(r, high, 1, i * 2_800);
  r = blocked(r, high, 21 * 2_800);
  t.equal(round(r.rpm), 18.9, 'the cut pace is 90 % of what was really sent (21), not half of 40');
  t.equal(round(r.ceiling), 18.9);
  const quiet = blocked(spend(newRoute(policy), policy, 1, 0), policy, 1_000);
  t.equal(quiet.rpm, 9, 'a block after one request: half the pace, under a ceiling of 90 % of that');
});
