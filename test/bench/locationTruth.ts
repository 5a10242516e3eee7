/**
 * Location truth with four proxies (docs/locations.md#how-routes-are-chosen): proxy 2 answers half of its searches
 * from its own city ("Chicago, Illinois"), proxy 3 one in six with only "United States", proxies 1 and 4 honour every
 * uule. Through `serp-api serve`, on every surface: located one-page searches over three cities (a quarter through
 * compat `/search.json`, an eighth through the MCP SDK's `serp_search`, the rest through `/v1`), one search without a
 * location after every ten located ones, and a monitor of 12 keywords; a `standardwebhooks` receiver takes every
 * `search.completed`. Four clients at a time, in submission order.
 *
 * The two sides, in one run, alternated by round, each with a fresh fake Google process (and its proxies) and a fresh
 * service: `learning` (the default: located searches follow their place's route records) against `blind`
 * (SERP_ROUTE_LEARNING=0: every route serves every search, the retry alone keeps results right).
 *
 *   node --import tsx test/bench/locationTruth.ts                   # 200 located searches a side, one round
 *   node --import tsx test/bench/locationTruth.ts --searches 60     # the size
 *
 * Per side: wrong-place successes on every surface, each counted independently of the check (the place the page
 * names against the city asked for): `/v1` `done`, compat `Success`, an MCP result that is not an error, a webhook
 * `search.completed` without a failure, a monitor point that is not failed; the share of located searches `matched`;
 * Google requests per located search (`search_metadata.requests`, retries included) over all of them and after the
 * first 50 (the records warmed up). The ratio of the latter (learning / blind) is printed only when neither side had a
 * search that did not end `done` (compare.ts).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Command, InvalidArgumentError } from 'commander';
import { lineName } from '../support/fakeGoogle.js';
import { startFakeGoogleProcess } from '../support/fakeGoogleProcess.js';
import { checks, monitorApi } from '../support/ranks.js';
import { pollJob, removeDir, startService, submit, tempDataDir } from '../support/service.js';
import { startReceiver, WEBHOOK_ENV } from '../support/webhookReceiver.js';
import { alternate, type Figure, machineNote, printRatio } from './compare.js';

const positive = (v: string) => {
  const n = Number(v);
  if (!(n > 0)) throw new InvalidArgumentError('a positive number');
  return n;
};
const opts = new Command('locationTruth')
  .option('--searches <n>', 'located one-page searches a side', positive, 200)
  .option('--warm <n>', 'located searches before the records count as warmed up', positive, 50)
  .option('--clients <n>', 'searches in flight at once', positive, 4)
  .option('--rounds <n>', 'rounds, sides alternated', positive, 1)
  .parse()
  .opts<{ searches: number; warm: number; clients: number; rounds: number }>();

const ADMIN = 'location-bench-admin-token-0123456789';
const CITIES = ['Austin,Texas,United States', 'Denver,Colorado,United States', 'Seattle,Washington,United States'];
const MONITOR_KEYWORDS = 12;
const HOMES = ['--home', '2=Chicago, Illinois@0.5', '--home', '3=United States@0.16667'];

type Surface = 'v1' | 'compat' | 'mcp';
interface Asked {
  index: number;
  surface: Surface;
  city?: string;
  keyword: string;
}
interface Answered extends Asked {
  jobId: string;
  /** what the surface itself said: done, Success, a tool result that is not an error */
  success: boolean;
}

interface Side {
  name: 'learning' | 'blind';
  located: number;
  done: number;
  partial: number;
  failed: number;
  matched: number;
  /** wrong-place answers each surface gave as a success */
  wrong: Record<Surface | 'webhook' | 'monitor', number>;
  /** of the located searches: how many went through each surface */
  bySurface: Record<Surface, number>;
  retries: number;
  requests: number;
  /** requests and searches after the first `warm` located searches */
  warmRequests: number;
  warmSearches: number;
  webhooks: number;
  monitorPoints: number;
  seconds: number;
}

const plan = (): Asked[] => {
  const out: Asked[] = [];
  for (let i = 0; i < opts.searches; i++) {
    const surface: Surface = i % 4 === 3 ? 'compat' : i % 8 === 1 ? 'mcp' : 'v1';
    out.push({ index: out.length, surface, city: CITIES[i % CITIES.length], keyword: `place ${i}` });
    if (i % 10 === 9) out.push({ index: out.length, surface: 'v1', keyword: `nowhere ${i}` });
  }
  return out;
};

const runSide = async (name: Side['name']): Promise<Side> => {
  const fake = await startFakeGoogleProcess(0, ['--one-page', '--proxies', '4', ...HOMES]);
  const receiver = await startReceiver();
  const data = tempDataDir('bench-location');
  const svc = await startService(data, {
    ...WEBHOOK_ENV,
    SERP_GOOGLE_ORIGIN: fake.origin,
    SERP_PROXY_URLS: fake.proxies.join(','),
    SERP_ADMIN_TOKEN: ADMIN,
    SERP_ROUTE_MAX_RPM: '0',
    SERP_ROUTE_LEARNING: name === 'learning' ? '1' : '0',
    SERP_MONITOR_SPREAD_MAX_S: '30',
    SERP_LOG_LEVEL: 'silent',
  });
  const mcp = new Client({ name: 'location-bench', version: '1.0.0' });
  try {
    const { key } = (await (
      await fetch(`${svc.url}/admin/api/keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ tier: 'enterprise' }),
      })
    ).json()) as { key: string };
    const headers = { 'x-api-key': key };
    const hook = (await (
      await fetch(`${svc.url}/v1/webhooks`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ url: `${receiver.origin}/hook`, events: ['search.completed'] }),
      })
    ).json()) as { secret: string };
    receiver.setSecrets('/hook', [hook.secret]);
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${svc.url}/mcp`), { requestInit: { headers } }));
    const api = monitorApi(svc.url, key);
    const began = Date.now();
    const monitor = await api.call('POST', '/monitors', {
      name: 'bench',
      keywords: Array.from({ length: MONITOR_KEYWORDS }, (_, i) => `${name} monitor ${i}`),
      domains: ['bbc.co.uk'],
      location: CITIES[0],
      depth: 10,
      schedule: 'daily',
    });
    if (monitor.status !== 201) throw new Error(`monitor: ${monitor.status} ${monitor.text}`);

    const ask = async (a: Asked): Promise<Answered> => {
      const keyword = `${name} ${a.keyword}`;
      if (a.surface === 'compat') {
        const q = new URLSearchParams({ engine: 'google', q: keyword, location: a.city!, api_key: key });
        const body = (await (await fetch(`${svc.url}/search.json?${q}`)).json()) as {
          search_metadata: { id: string; status: string };
        };
        return { ...a, jobId: body.search_metadata.id, success: body.search_metadata.status === 'Success' };
      }
      if (a.surface === 'mcp') {
        const result = (await mcp.callTool(
          { name: 'serp_search', arguments: { keyword, location: a.city!, depth: 10 } },
          undefined,
          { timeout: 300_000 },
        )) as { isError?: boolean; content: Array<{ text?: string }>; structuredContent?: { job_id?: string } };
        const jobId =
          result.structuredContent?.job_id ?? /job ([0-9a-f]{24})/.exec(result.content[0]?.text ?? '')?.[1] ?? '';
        return { ...a, jobId, success: result.isError !== true };
      }
      const res = await submit(svc.url, key, { keyword, ...(a.city ? { location: a.city } : {}), depth: 10 });
      const { job_id: jobId } = (await res.json()) as { job_id: string };
      const body = (await (await pollJob(svc.url, key, jobId, 'json', 300_000)).json()) as {
        search_metadata?: { status: string };
      };
      return { ...a, jobId, success: body.search_metadata?.status === 'done' };
    };

    const queue = plan();
    const answered: Answered[] = [];
    await Promise.all(
      Array.from({ length: opts.clients }, async () => {
        for (let a = queue.shift(); a; a = queue.shift()) answered.push(await ask(a));
      }),
    );
    const points = await api.waitForHistory(monitor.json.monitor_id, (p) => checks(p) >= MONITOR_KEYWORDS, 600_000);
    const seconds = (Date.now() - began) / 1000;
    const metaOf = async (jobId: string) =>
      (
        (await (await fetch(`${svc.url}/v1/search/${jobId}?output=json`, { headers })).json()) as {
          search_metadata?: {
            status: string;
            requests?: number;
            location_check?: { status: string; retries: number };
            information: { detected_location?: { name: string } };
          };
        }
      ).search_metadata;

    const located = answered.filter((a) => a.city).sort((a, b) => a.index - b.index);
    await receiver.waitFor(
      (all) => answered.every((a) => all.some((r) => r.payload?.data.job_id === a.jobId)),
      'search.completed of every search',
      120_000,
    );
    const side: Side = {
      name,
      located: located.length,
      done: 0,
      partial: 0,
      failed: 0,
      matched: 0,
      wrong: { v1: 0, compat: 0, mcp: 0, webhook: 0, monitor: 0 },
      bySurface: { v1: 0, compat: 0, mcp: 0 },
      retries: 0,
      requests: 0,
      warmRequests: 0,
      warmSearches: 0,
      webhooks: receiver.received.length,
      monitorPoints: points.length,
      seconds,
    };
    for (const [n, a] of located.entries()) {
      side.bySurface[a.surface] += 1;
      const meta = a.jobId ? await metaOf(a.jobId) : undefined;
      if (!meta || meta.status === 'failed') {
        side.failed += 1;
        continue;
      }
      const wrong = meta.information.detected_location?.name !== lineName(a.city!);
      if (meta.status === 'done') side.done += 1;
      else side.partial += 1;
      if (meta.location_check?.status === 'matched') side.matched += 1;
      if (wrong && meta.status === 'done') side.wrong.v1 += 1;
      if (wrong && a.success && a.surface !== 'v1') side.wrong[a.surface] += 1;
      const hooked = receiver.received.find((r) => r.payload?.data.job_id === a.jobId);
      if (wrong && hooked && hooked.payload?.data.failure === undefined) side.wrong.webhook += 1;
      side.retries += meta.location_check?.retries ?? 0;
      side.requests += meta.requests ?? 0;
      if (n >= opts.warm) {
        side.warmRequests += meta.requests ?? 0;
        side.warmSearches += 1;
      }
    }
    for (const p of points) {
      if (p.status === 'failed') continue;
      const meta = await metaOf(p.job_id);
      if (meta?.information.detected_location?.name !== lineName(CITIES[0]!)) side.wrong.monitor += 1;
    }
    return side;
  } finally {
    await mcp.close().catch(() => undefined);
    await svc.stop();
    await fake.close();
    await receiver.close();
    removeDir(data);
  }
};

const pct = (n: number, of: number) => `${((100 * n) / Math.max(1, of)).toFixed(1)} %`;
const show = (s: Side) => {
  const w = s.wrong;
  console.log(
    `${s.name.padEnd(8)} ${s.located} located searches (v1 ${s.bySurface.v1}, compat ${s.bySurface.compat}, MCP ${s.bySurface.mcp}) in ${s.seconds.toFixed(1)} s: done ${s.done}, partial ${s.partial}, failed ${s.failed}; matched ${s.matched} (${pct(s.matched, s.located)}); wrong place served as a success: v1 ${w.v1}, compat ${w.compat}, MCP ${w.mcp}, webhook ${w.webhook}, monitor ${w.monitor} (of ${s.monitorPoints} points); pages fetched again ${s.retries}; Google requests ${(s.requests / Math.max(1, s.located)).toFixed(3)} per search, ${(s.warmRequests / Math.max(1, s.warmSearches)).toFixed(3)} after the first ${opts.warm}; ${s.webhooks} webhooks`,
  );
};

console.log(
  `location truth: 4 proxies (2: half in Chicago, 3: one in six "United States" only, 1 and 4 honest); ${opts.searches} located one-page searches over ${CITIES.length} cities, ${Math.floor(opts.searches / 10)} without a location, a monitor of ${MONITOR_KEYWORDS}; ${opts.clients} clients; ${machineNote()}`,
);
const results = await alternate(
  opts.rounds,
  { learning: () => runSide('learning'), blind: () => runSide('blind') },
  (round, r) => {
    console.log(`round ${round + 1}`);
    show(r.learning);
    show(r.blind);
  },
);
const warmPerSearch = (sides: Side[]): Figure => ({
  value:
    sides.reduce((n, s) => n + s.warmRequests, 0) /
    Math.max(
      1,
      sides.reduce((n, s) => n + s.warmSearches, 0),
    ),
  failures: sides.reduce((n, s) => n + s.located - s.done, 0),
});
printRatio(
  `Google requests per located search after the first ${opts.warm}, learning / blind`,
  warmPerSearch(results.learning),
  warmPerSearch(results.blind),
  ['learning', 'blind'],
);
