/**
 * The fake Google origin the tests use, as a command, for trying the service offline (README, "A first search"):
 *
 *   npm run fake-google                     # http://127.0.0.1:8090, real result pages from ../shared/fixtures
 *   SERP_GOOGLE_ORIGIN=http://127.0.0.1:8090 SERP_FETCHER=http npm start
 *
 * Every query gets the same ten real Google result pages (start=0,10,…,90), so a top-100 search finishes with real
 * organic results, features and positions; "why is the sky blue?" gets a 2026 page with an AI Overview. It needs the
 * fixture pages (`../shared/fixtures` beside the checkout, or SERP_FIXTURES_DIR).
 */
import { Command, InvalidArgumentError } from 'commander';
import { startFakeGoogle } from '../test/support/fakeGoogle.js';
import { fixturesMissing } from '../test/support/fixtures.js';

const port = (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('a port number (0-65535)');
  return n;
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
  .option('--quiet', 'print only the origin (benchmarks run it as a process of its own)')
  .parse();

const opts = program.opts<{ port: number; host: string; latency: number; rotate?: boolean; quiet?: boolean }>();
if (fixturesMissing('serp')) {
  console.error(
    'fake-google: the fixture pages are needed (../shared/fixtures beside the checkout, or SERP_FIXTURES_DIR)',
  );
  process.exit(1);
}
const fake = await startFakeGoogle({ port: opts.port, host: opts.host, latencyMs: opts.latency, rotate: opts.rotate });
// --port 0 takes a free port: the origin printed is the one listening
const origin = `http://${opts.host}:${new URL(fake.origin).port}`;
console.log(
  opts.quiet
    ? origin
    : `fake Google on ${origin} (start the service with SERP_GOOGLE_ORIGIN=${origin} SERP_FETCHER=http)`,
);
// the fake keeps every request for tests; a long-running one forgets them after logging
setInterval(() => {
  for (const r of fake.requests.splice(0))
    if (r.path === '/search' && !opts.quiet)
      console.log(`GET /search q=${JSON.stringify(r.query.q ?? '')} start=${r.query.start ?? 0}`);
}, 1000).unref();
const stop = () => void fake.close().then(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
