/**
 * The fake Google origin the tests use, as a command, for trying the service offline (README, "A first search"):
 *
 *   npm run fake-google                     # http://127.0.0.1:8090, real result pages from ../shared/fixtures
 *   SERP_GOOGLE_ORIGIN=http://127.0.0.1:8090 SERP_FETCHER=http SERP_ROUTE_MAX_RPM=0 npm start   # what it prints
 *
 * Every query gets the same ten real Google result pages (start=0,10,…,90), so a top-100 search finishes with real
 * organic results, features and positions; "why is the sky blue?" gets a 2026 page with an AI Overview. It needs the
 * fixture pages (`../shared/fixtures` beside the checkout, or SERP_FIXTURES_DIR).
 *
 * `--adversary` makes it behave like live Google towards crawlers (docs/adversary.md): the JavaScript challenge,
 * a per-address rate limit with /sorry/ bans, the EU consent page, 5xx and hangs, each tunable below; `--proxies N`
 * starts N local forward proxies that reach it from 127.0.0.2, 127.0.0.3, … (print them for SERP_PROXY_URLS).
 *
 * Every result page's location line names the request's uule place; `--home "2=Chicago, Illinois" --home-share 0.5`
 * makes proxy 2 (127.0.0.3) place every second search in its own city instead, as a proxy whose address Google trusts
 * over the uule does; `--no-placement` keeps the pages' own (docs/locations.md#offline-the-fake-google-plays-along).
 */
import { writeFileSync } from 'node:fs';
import { Command, InvalidArgumentError } from 'commander';
import type { AdversaryOptions } from '../test/support/adversary.js';
import { ONE_PAGE, startFakeGoogle } from '../test/support/fakeGoogle.js';
import { fixturesMissing } from '../test/support/fixtures.js';
import { startProxies } from '../test/support/proxies.js';

const port = (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('a port number (0-65535)');
  return n;
};
const count = (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('a non-negative integer');
  return n;
};
const share = (value: string) => {
  const n = Number(value);
  if (!(n >= 0 && n <= 1)) throw new InvalidArgumentError('a share between 0 and 1');
  return n;
};

/**
 * `N=place`: proxy N (from 1) of --proxies, whose searches Google places in `place` for --home-share of them;
 * `N=place@share` gives that proxy a share of its own ("3=United States@0.1667": one search in six)
 */
const homes = (value: string, previous: Array<{ proxy: number; name: string; share?: number }>) => {
  const m = /^(\d+)=([^@]+)(?:@([\d.]+))?$/.exec(value);
  const own = m?.[3] === undefined ? undefined : Number(m[3]);
  if (!m || Number(m[1]) < 1 || (own !== undefined && !(own >= 0 && own <= 1)))
    throw new InvalidArgumentError('N=place or N=place@share, N being a proxy from 1: "2=Chicago, Illinois"');
  return [...previous, { proxy: Number(m[1]), name: m[2]!.trim(), ...(own !== undefined ? { share: own } : {}) }];
};

const program = new Command('fake-google')
  .description('serve real Google result pages from the fixtures on a local port (offline use and tests)')
  .option('-p, --port <n>', 'port to listen on', port, 8090)
  .option('--host <host>', 'address to listen on', '127.0.0.1')
  .option('--latency <ms>', 'delay before each result page', port, 0)
  .option(
    '--rotate',
    'each new search of a query turns its pages by one (positions move between searches: rank tracking)',
  )
  .option('--one-page', 'every query has a single result page (no "Next" link): one request per search')
  .option('--adversary', 'behave like live Google towards crawlers (docs/adversary.md)')
  .option('--rate-limit <n>', 'adversary: requests one address may make per window before a ban (0: none)', count, 20)
  .option('--window-ms <ms>', "adversary: the rate limit's window", count, 60_000)
  .option('--ban-ms <ms>', 'adversary: the first ban; doubles with each request made while banned', count, 60_000)
  .option('--token-requests <n>', "adversary: requests a challenge's token is good for (0: no challenge)", count, 50)
  .option('--token-ttl-ms <ms>', "adversary: how long a challenge's token lives", count, 600_000)
  .option('--error-rate <share>', 'adversary: /search requests answered 500/503', share, 0.01)
  .option('--hang-rate <share>', 'adversary: /search requests never answered', share, 0.002)
  .option('--no-consent', 'adversary: no EU consent page')
  .option('--proxies <n>', 'start N forward proxies that reach the origin from 127.0.0.2, 127.0.0.3, …', count, 0)
  .option(
    '--home <N=place>',
    "proxy N's home city, which wins over the uule for --home-share of its searches",
    homes,
    [],
  )
  .option('--home-share <share>', "the share of a home proxy's searches placed in its home city", share, 0.5)
  .option('--no-placement', "serve the fixture pages' own location lines (not the uule's place)")
  .option('--json', 'print one JSON line {origin, proxies} and nothing else (benchmarks)')
  .option('--save <file>', 'also write {origin, proxies} as JSON to <file>, for the service command to read')
  .option('--quiet', 'print only the origin (benchmarks run it as a process of its own)')
  .parse();

const opts = program.opts<{
  port: number;
  host: string;
  latency: number;
  rotate?: boolean;
  onePage?: boolean;
  adversary?: boolean;
  rateLimit: number;
  windowMs: number;
  banMs: number;
  tokenRequests: number;
  tokenTtlMs: number;
  errorRate: number;
  hangRate: number;
  consent: boolean;
  proxies: number;
  home: Array<{ proxy: number; name: string; share?: number }>;
  homeShare: number;
  placement: boolean;
  json?: boolean;
  save?: string;
  quiet?: boolean;
}>();
if (fixturesMissing('serp')) {
  console.error(
    'fake-google: the fixture pages are needed (../shared/fixtures beside the checkout, or SERP_FIXTURES_DIR)',
  );
  process.exit(1);
}
const adversary: AdversaryOptions | undefined = opts.adversary
  ? {
      ...(opts.tokenRequests > 0
        ? { challenge: { requestsPerToken: opts.tokenRequests, tokenTtlMs: opts.tokenTtlMs } }
        : {}),
      ...(opts.rateLimit > 0
        ? { rateLimit: { perWindow: opts.rateLimit, windowMs: opts.windowMs, banMs: opts.banMs } }
        : {}),
      consent: opts.consent,
      flaky: { errorRate: opts.errorRate, hangRate: opts.hangRate },
    }
  : undefined;
/**
 * The exact `npm start` for this origin. The service paces each route at SERP_ROUTE_MAX_RPM (20 a minute) because live
 * Google bans an address that asks faster (docs/fleet.md); this origin never bans unless it plays the adversary, so
 * pacing would only make a ten-page search take 30 s instead of one.
 */
const serviceCommand = (origin: string) =>
  [
    `SERP_GOOGLE_ORIGIN=${origin}`,
    'SERP_FETCHER=http',
    ...(adversary ? [] : ['SERP_ROUTE_MAX_RPM=0']),
    ...(proxies ? [`SERP_PROXY_URLS=${proxies.urls.join(',')}`] : []),
    'npm start',
  ].join(' ');
const fake = await startFakeGoogle({
  port: opts.port,
  host: opts.host,
  latencyMs: opts.latency,
  rotate: opts.rotate,
  ...(adversary ? { adversary } : {}),
  ...(opts.onePage ? ONE_PAGE : {}),
  placement: opts.placement
    ? {
        homes: Object.fromEntries(
          opts.home.map((h) => [`127.0.0.${h.proxy + 1}`, { name: h.name, share: h.share ?? opts.homeShare }]),
        ),
      }
    : false,
});
const proxies = opts.proxies > 0 ? await startProxies(opts.proxies) : undefined;
// --port 0 takes a free port: the origin printed is the one listening
const origin = `http://${opts.host}:${new URL(fake.origin).port}`;
if (opts.save) writeFileSync(opts.save, `${JSON.stringify({ origin, proxies: proxies?.urls ?? [] })}\n`);
if (opts.json) console.log(JSON.stringify({ origin, proxies: proxies?.urls ?? [] }));
else if (opts.quiet) console.log(origin);
else {
  console.log(`fake Google on ${origin}`);
  console.log(`start the service against it, from the checkout:\n\n  ${serviceCommand(origin)}\n`);
  console.log(
    adversary
      ? 'the adversary bans an address that asks too fast, as Google does: the service paces each route (docs/fleet.md)'
      : 'SERP_ROUTE_MAX_RPM=0: no per-route pacing, since this origin never bans (live Google does: docs/fleet.md)',
  );
  if (proxies) console.log(`forward proxies: SERP_PROXY_URLS=${proxies.urls.join(',')}`);
  if (adversary) console.log(`adversary: ${JSON.stringify(adversary)}; counts at ${origin}/__fake/adversary`);
  for (const h of opts.home)
    console.log(
      `proxy ${h.proxy} (127.0.0.${h.proxy + 1}) places ${(h.share ?? opts.homeShare) * 100} % of its searches in ${h.name}`,
    );
}
// the fake keeps every request for tests; a long-running one forgets them after logging
setInterval(() => {
  for (const r of fake.requests.splice(0))
    if (r.path === '/search' && !opts.quiet && !opts.json)
      console.log(`GET /search q=${JSON.stringify(r.query.q ?? '')} start=${r.query.start ?? 0} from ${r.address}`);
}, 1000).unref();
const stop = () => void Promise.all([fake.close(), proxies?.close()]).then(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
