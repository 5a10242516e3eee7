/**
 * Location truth against a proxy that ignores the uule (docs/locations.md#the-check): `P` proxies, one of which Google
 * places in its own city ("Chicago, Illinois") for `share` of its searches, and `N` located one-page searches made by
 * four monitors (one per city, N / 4 keywords each, their first runs spread over 10 s) through `serp-api serve`.
 * The baseline, in the same run with sides alternated: the same searches through the same fleet where no proxy does
 * so. Each side gets a fresh fake Google process (with its proxies) and a fresh service.
 *
 *   node --import tsx test/bench/locationTruth.ts                      # 4 proxies, 200 searches, share 0.5
 *   node --import tsx test/bench/locationTruth.ts --searches 40        # a quick look
 *
 * Per side: searches done / partial / failed / unfinished; their location checks; wrong-place positions served
 * `done` and recorded by a monitor, each counted independently of the check (the place the page names against the
 * city asked for); pages Google placed elsewhere (what would have been served from the wrong place without the
 * check); Google requests per search (`search_metadata.requests`: every request the crawl made, retries included).
 * The ratio of requests per search (misplacing fleet / honest fleet) is what the retries cost; it is printed only
 * when neither side had a search that did not end done (compare.ts).
 */
import { Command, InvalidArgumentError } from 'commander';
import { lineName } from '../support/fakeGoogle.js';
import { startFakeGoogleProcess } from '../support/fakeGoogleProcess.js';
import { checks, monitorApi, type Point } from '../support/ranks.js';
import { removeDir, startService, tempDataDir } from '../support/service.js';
import { alternate, type Figure, machineNote, printRatio } from './compare.js';

const positive = (v: string) => {
  const n = Number(v);
  if (!(n > 0)) throw new InvalidArgumentError('a positive number');
  return n;
};
const opts = new Command('locationTruth')
  .option('--searches <n>', 'located one-page searches (a multiple of 4: four cities)', positive, 200)
  .option('--proxies <n>', 'forward proxies', positive, 4)
  .option('--share <s>', "the share of the misplacing proxy's searches Google places in its own city", positive, 0.5)
  .option('--rounds <n>', 'rounds, sides alternated', positive, 1)
  .parse()
  .opts<{ searches: number; proxies: number; share: number; rounds: number }>();

const ADMIN = 'location-bench-admin-token-0123456789';
const CITIES = [
  'Austin,Texas,United States',
  'Denver,Colorado,United States',
  'Seattle,Washington,United States',
  'Boston,Massachusetts,United States',
];
const perCity = Math.max(1, Math.round(opts.searches / CITIES.length));

interface Meta {
  status: string;
  requests?: number;
  location_check?: { status: string; retries: number };
  information: { detected_location?: { name: string } };
}

interface Side {
  name: 'misplacing' | 'honest';
  searches: number;
  done: number;
  partial: number;
  failed: number;
  unfinished: number;
  matched: number;
  /** done searches whose page names another place than the city asked for */
  wrongDone: number;
  /** monitor points (ranked or not) from a search whose page names another place */
  wrongRecorded: number;
  /** points recorded as failed `location_mismatch` */
  flagged: number;
  /** pages fetched again because Google placed them elsewhere */
  retries: number;
  requests: number;
  seconds: number;
}

const runSide = async (name: Side['name']): Promise<Side> => {
  const fake = await startFakeGoogleProcess(0, [
    '--one-page',
    '--proxies',
    String(opts.proxies),
    ...(name === 'misplacing' ? ['--home', '2=Chicago, Illinois', '--home-share', String(opts.share)] : []),
  ]);
  const data = tempDataDir('bench-location');
  const svc = await startService(data, {
    SERP_GOOGLE_ORIGIN: fake.origin,
    SERP_PROXY_URLS: fake.proxies.join(','),
    SERP_ADMIN_TOKEN: ADMIN,
    SERP_MONITOR_SPREAD_MAX_S: '10',
    SERP_MONITOR_TICK_MS: '200',
    SERP_LOG_LEVEL: 'silent',
  });
  try {
    const { key } = (await (
      await fetch(`${svc.url}/admin/api/keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ tier: 'enterprise' }),
      })
    ).json()) as { key: string };
    const api = monitorApi(svc.url, key);
    const began = Date.now();
    const monitors = await Promise.all(
      CITIES.map(async (city, c) => {
        const created = await api.call('POST', '/monitors', {
          name: city,
          keywords: Array.from({ length: perCity }, (_, i) => `${name} ${c} ${i}`),
          domains: ['bbc.co.uk'],
          location: city,
          depth: 10,
          schedule: 'daily',
        });
        if (created.status !== 201) throw new Error(`monitor: ${created.status} ${created.text}`);
        return { city, id: created.json.monitor_id as string };
      }),
    );
    const histories = await Promise.all(
      monitors.map(async (m) => ({
        ...m,
        points: await api.waitForHistory(m.id, (p) => checks(p) >= perCity, 600_000),
      })),
    );
    const seconds = (Date.now() - began) / 1000;
    const side: Side = {
      name,
      searches: perCity * CITIES.length,
      done: 0,
      partial: 0,
      failed: 0,
      unfinished: 0,
      matched: 0,
      wrongDone: 0,
      wrongRecorded: 0,
      flagged: 0,
      retries: 0,
      requests: 0,
      seconds,
    };
    for (const h of histories) {
      const asked = lineName(h.city);
      const byJob = new Map<string, Point>(h.points.map((p) => [p.job_id, p]));
      side.unfinished += perCity - byJob.size;
      for (const [jobId, point] of byJob) {
        const res = await fetch(`${svc.url}/v1/search/${jobId}?output=json`, { headers: { 'x-api-key': key } });
        if (res.status !== 200) {
          side.unfinished += 1;
          continue;
        }
        const body = (await res.json()) as { search_metadata?: Meta; status?: string };
        const meta = body.search_metadata;
        if (!meta) {
          side.failed += 1;
          continue;
        }
        const wrong = meta.information.detected_location?.name !== asked;
        if (meta.status === 'done') side.done += 1;
        else side.partial += 1;
        if (meta.location_check?.status === 'matched') side.matched += 1;
        if (meta.status === 'done' && wrong) side.wrongDone += 1;
        if (point.status !== 'failed' && wrong) side.wrongRecorded += 1;
        if (point.failure === 'location_mismatch') side.flagged += 1;
        side.retries += meta.location_check?.retries ?? 0;
        side.requests += meta.requests ?? 0;
      }
    }
    return side;
  } finally {
    await svc.stop();
    await fake.close();
    removeDir(data);
  }
};

const pct = (n: number, of: number) => `${((100 * n) / Math.max(1, of)).toFixed(1)} %`;
const show = (s: Side) =>
  console.log(
    `${s.name.padEnd(10)} ${s.searches} searches in ${s.seconds.toFixed(1)} s: done ${s.done}, partial ${s.partial}, failed ${s.failed}, unfinished ${s.unfinished}; matched ${s.matched} (${pct(s.matched, s.searches)}); wrong place served done ${s.wrongDone}, recorded by a monitor ${s.wrongRecorded}, flagged location_mismatch ${s.flagged}; pages placed elsewhere and fetched again ${s.retries} (${pct(s.retries, s.searches)}); Google requests ${s.requests} (${(s.requests / s.searches).toFixed(3)} per search)`,
  );

console.log(
  `location truth: ${opts.proxies} proxies, proxy 2 placing ${opts.share * 100} % of its searches in Chicago; ${perCity * CITIES.length} one-page searches by 4 monitors; ${machineNote()}`,
);
const results = await alternate(
  opts.rounds,
  { misplacing: () => runSide('misplacing'), honest: () => runSide('honest') },
  (round, r) => {
    console.log(`round ${round + 1}`);
    show(r.misplacing);
    show(r.honest);
  },
);
const perSearch = (sides: Side[]): Figure => {
  const searches = sides.reduce((n, s) => n + s.searches, 0);
  return {
    value: sides.reduce((n, s) => n + s.requests, 0) / Math.max(1, searches),
    failures: sides.reduce((n, s) => n + s.searches - s.done, 0),
  };
};
printRatio(
  'Google requests per search, misplacing fleet / honest fleet',
  perSearch(results.misplacing),
  perSearch(results.honest),
  ['misplacing', 'honest'],
);
