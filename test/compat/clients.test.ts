import { execFile } from 'node:child_process';
import https from 'node:https';
import { createRequire } from 'node:module';
import net from 'node:net';
import { promisify } from 'node:util';
import { config, getAccount, getHtml, getHtmlBySearchId, getJson, getJsonBySearchId, getLocations } from 'serpapi';
import t from 'tap';
import { fixturesMissing } from '../support/fixtures.js';
import { startStack } from '../support/service.js';

const require = createRequire(import.meta.url);
const run = promisify(execFile);

/**
 * SerpApi's own clients, unchanged, against the compat surface of a running service. They hard-code
 * serpapi.com:443; the recipe of docs/compat.md#clients points them here with an https.Agent whose connection goes to
 * this service over plain HTTP. Everything else is the client's own code.
 */
const localAgent = (url: string) => {
  const { hostname, port } = new URL(url);
  class LocalAgent extends https.Agent {
    override createConnection() {
      return net.connect({ host: hostname, port: Number(port) });
    }
  }
  return new LocalAgent();
};

type Json = Record<string, any>;

/** The Python client runs where python3 has it (pip install serpapi); this machine's CI cannot reach PyPI. */
const pythonMissing = await run('python3', ['-c', 'import serpapi'], { timeout: 20_000 }).then(
  () => false,
  () => 'python3 with the serpapi package is not installed (pip install serpapi)',
);
if (pythonMissing) console.log(`# skipping the Python client: ${pythonMissing}`);

/** The npm client rejects with the raw body string, not an Error: what it rejected with, if it did. */
const rejection = (p: Promise<unknown>) =>
  p.then(
    () => 'resolved',
    (e: unknown) => String(e),
  );

t.test('SerpApi clients against the compat surface', { skip: fixturesMissing() }, async (t) => {
  const { svc, mintKey } = await startStack(t);
  config.requestOptions = { agent: localAgent(svc.url) };
  config.timeout = 60_000;
  t.teardown(() => {
    config.requestOptions = {};
  });
  const { key } = await mintKey(['--tier', 'pro']);
  const account = async () => (await getAccount({ api_key: key })) as Json;

  t.test('npm serpapi › getJson: a synchronous search in SerpApi’s envelope', async (t) => {
    const res = (await getJson({
      engine: 'google',
      q: 'coffee',
      location: 'Austin, Texas, United States',
      api_key: key,
    })) as Json;
    t.match(res.search_metadata, {
      id: /^[0-9a-f]{24}$/,
      status: 'Success',
      json_endpoint: `${svc.url}/searches/${res.search_metadata.id}.json`,
      created_at: /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/,
      processed_at: /UTC$/,
      raw_html_file: new RegExp(`^${svc.url}/raw/`),
      total_time_taken: Number,
    });
    t.match(res.search_parameters, {
      engine: 'google',
      q: 'coffee',
      location_requested: 'Austin, Texas, United States',
      location_used: 'Austin,Texas,United States',
      google_domain: 'google.com',
      device: 'desktop',
    });
    t.notOk(JSON.stringify(res).includes(key), 'the key is never echoed');
    t.equal(res.search_information.organic_results_state, 'Results for exact spelling');
    t.ok(res.organic_results.length > 50, `the merged top 100 in one answer (${res.organic_results.length})`);
    t.same(
      res.organic_results.slice(0, 3).map((r: Json) => r.position),
      [1, 2, 3],
    );
    t.notOk(res.serpapi_pagination.next, 'everything came in one page: no next');
    // the raw HTML link works without a key, as SerpApi's raw_html_file does
    const raw = await fetch(res.search_metadata.raw_html_file);
    t.equal(raw.status, 200);
  });

  t.test('npm serpapi › pagination: num slices, next pages through the same result, no new quota', async (t) => {
    const before = (await account()).this_month_usage;
    const first = (await getJson({ engine: 'google', q: 'coffee beans', num: 10, api_key: key })) as Json;
    t.equal(first.organic_results.length, 10);
    t.equal(first.serpapi_pagination.current, 1);
    const next = new URL(first.serpapi_pagination.next);
    t.equal(next.origin, new URL(svc.url).origin, 'next is an absolute link on this service');
    t.notOk(next.searchParams.has('api_key'), 'links never carry the key');
    // what the client's README does: the next link's parameters into a new getJson call
    const second = (await getJson({ ...Object.fromEntries(next.searchParams), api_key: key })) as Json;
    t.same(
      second.organic_results.map((r: Json) => r.position),
      first.organic_results.map((r: Json) => r.position + 10),
      'the next ten, positions 11–20',
    );
    t.equal(second.serpapi_pagination.current, 2);
    t.equal(second.search_metadata.id, first.search_metadata.id, 'the same search, sliced again');
    t.equal((await account()).this_month_usage, before + 1, 'one search charged for both pages');
  });

  t.test('npm serpapi › async: true, then getJsonBySearchId until Success', async (t) => {
    const submitted = (await getJson({ engine: 'google', q: 'green tea', async: true, api_key: key })) as Json;
    t.match(submitted.search_metadata.status, /^(Queued|Processing|Success)$/);
    const id = submitted.search_metadata.id;
    let got: Json = submitted;
    for (let i = 0; i < 200 && got.search_metadata.status !== 'Success'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      got = (await getJsonBySearchId(id, { api_key: key })) as Json;
    }
    t.equal(got.search_metadata.status, 'Success');
    t.equal(got.search_metadata.id, id);
    t.ok(got.organic_results.length > 50);
    const html = await getHtmlBySearchId(id, { api_key: key });
    t.match(html, /<html/i, 'getHtmlBySearchId: the raw page');
  });

  t.test('npm serpapi › getHtml, getAccount, getLocations', async (t) => {
    const html = await getHtml({ engine: 'google', q: 'coffee', api_key: key });
    t.match(html, /<html/i);
    const info = await account();
    for (const k of [
      'account_email',
      'account_id',
      'account_rate_limit_per_hour',
      'api_key',
      'extra_credits',
      'last_hour_searches',
      'plan_id',
      'plan_monthly_price',
      'plan_name',
      'plan_searches_left',
      'searches_per_month',
      'this_hour_searches',
      'this_month_usage',
      'total_searches_left',
    ])
      t.ok(k in info, `account has ${k}`);
    t.match(info, { plan_id: 'pro', plan_name: 'Pro Plan', account_status: 'Active' });
    t.notOk(JSON.stringify(info).includes(key), 'the key is shown masked only');
    t.ok(info.this_month_usage >= 3 && info.last_hour_searches === info.this_month_usage, 'usage and last hour agree');
    t.equal(
      info.account_rate_limit_per_hour,
      info.account_rate_limit_per_hour - (info.account_rate_limit_per_hour % 60),
    );
    const places = (await getLocations({ q: 'Austin', limit: 3 })) as Json[];
    t.equal(places.length, 3);
    t.match(places[0], {
      id: String,
      google_id: Number,
      name: 'Austin',
      canonical_name: /Austin/,
      country_code: String,
      target_type: String,
      reach: Number,
    });
  });

  t.test(
    'npm serpapi › getLocations: the largest place of a name first, and the largest places without q',
    async (t) => {
      const austin = (await getLocations({ q: 'Austin', limit: 3 })) as Json[];
      t.equal(austin[0]?.canonical_name, 'Austin,Texas,United States', 'Austin, Texas before Austin, Manitoba');
      t.ok(austin[0]?.reach > austin[1]?.reach, 'reach counts people: the largest first');
      const london = (await getLocations({ q: 'London', limit: 3 })) as Json[];
      t.equal(london[0]?.canonical_name, 'London,England,United Kingdom');
      // the client's own test: getLocations({ limit: 3 }) has three
      const largest = (await getLocations({ limit: 3 })) as Json[];
      t.equal(largest.length, 3);
      t.ok(largest.every((l) => l.reach > 0));
    },
  );

  t.test('npm serpapi › location as clients write it: one place, each echoed as requested', async (t) => {
    // the legacy client's README quick start ("Austin, TX"), SerpBear's City,Country, a partial canonical name, an id
    for (const location of ['Austin, TX', 'Austin,United States', 'Austin, Texas', '1026201']) {
      const res = (await getJson({ engine: 'google', q: 'coffee forms', location, api_key: key })) as Json;
      t.equal(res.search_metadata.status, 'Success', location);
      t.equal(res.search_parameters.location_requested, location);
      t.equal(res.search_parameters.location_used, 'Austin,Texas,United States', `${location}: targeted at Austin`);
    }
    const refused = await rejection(getJson({ engine: 'google', q: 'coffee', location: 'Austn, Texas', api_key: key }));
    t.match(
      refused,
      /Unsupported `Austn, Texas` location - location parameter\. Did you mean \\?"Austin,Texas,United States/,
    );
  });

  t.test('npm serpapi › an invalid key is a 401 in SerpApi’s words', async (t) => {
    t.match(await rejection(getJson({ engine: 'google', q: 'coffee', api_key: 'sk_wrong' })), /Invalid API key/);
    t.match(await rejection(getAccount({ api_key: 'sk_wrong' })), /Invalid API key/);
  });

  t.test('npm serpapi › an exhausted quota is a 429 with its own message and a Retry-After', async (t) => {
    const { key: small } = await mintKey(['--tier', 'free', '--quota', '1']);
    await getJson({ engine: 'google', q: 'quota one', api_key: small });
    t.match(await rejection(getJson({ engine: 'google', q: 'quota two', api_key: small })), /run out of searches/);
    const res = await fetch(`${svc.url}/search.json?q=quota+three&api_key=${small}`);
    t.equal(res.status, 429);
    t.ok(Number(res.headers.get('retry-after')) > 0, 'Retry-After until the month turns');
    t.match(await res.json(), { error: 'Your account has run out of searches.' });
  });

  t.test('the rate limit is a 429 of its own, with Retry-After', async (t) => {
    const { key: slow } = await mintKey(['--tier', 'free', '--rate', '1']);
    const ok = await fetch(`${svc.url}/search?q=rate+one&api_key=${slow}&async=true`);
    t.equal(ok.status, 200);
    const res = await fetch(`${svc.url}/search?q=rate+two&api_key=${slow}&async=true`);
    t.equal(res.status, 429);
    t.ok(Number(res.headers.get('retry-after')) > 0);
    t.match(await res.json(), { error: /rate limit of 1 searches per minute/ });
  });

  t.test('bad input › SerpApi’s {"error"} shape, never a 5xx', async (t) => {
    const cases: Array<[string, number, RegExp]> = [
      ['q=coffee&engine=bing', 400, /Unsupported `bing` search engine/],
      ['engine=google', 400, /Missing query `q` parameter/],
      [`q=${'x'.repeat(10_000)}`, 400, /q: keyword must be at most 2048/],
      ['q=coffee&location=Atlantis%2C+Nowhere', 400, /Unsupported `Atlantis, Nowhere` location - location parameter/],
      ['q=coffee&start=100', 400, /start must be an integer from 0 to 99/],
      ['q=coffee&num=-1', 400, /num must be an integer from 1 to 100/],
      ['q=coffee&num=abc', 400, /num must be an integer/],
      ['q=coffee&google_domain=evil.com', 400, /google_domain: .*Google/],
      ['q=coffee&device=toaster', 400, /Unsupported `toaster` device/],
      ['q=coffee&async=true&no_cache=true', 400, /async and no_cache/],
      ['q=coffee&async=maybe', 400, /async must be true or false/],
      ['q=coffee&gl=zz', 400, /gl:/],
    ];
    for (const [query, status, error] of cases) {
      const res = await fetch(`${svc.url}/search.json?${query}&api_key=${key}`);
      t.equal(res.status, status, query.slice(0, 60));
      const body = (await res.json()) as Json;
      t.match(body.error, error, query.slice(0, 60));
      t.ok(body.error.length < 400, 'the error does not echo a huge parameter');
    }
    const unknown = await fetch(`${svc.url}/search.json?q=coffee&source=nodejs&json_restrictor=x&api_key=${key}`);
    t.equal(unknown.status, 200, 'unknown parameters are tolerated');
    await unknown.arrayBuffer();
    const missing = await fetch(`${svc.url}/searches/0123456789abcdef01234567.json?api_key=${key}`);
    t.equal(missing.status, 404);
    t.match(await missing.json(), { error: 'Search not found.' });
    const noKey = await fetch(`${svc.url}/search.json?q=coffee`);
    t.equal(noKey.status, 401);
    t.match(await noKey.json(), { error: /^Invalid API key/ });
    const byId = (await getLocations({ q: 'Austin, Texas', limit: 1 })) as Json[];
    const viaId = await fetch(`${svc.url}/search.json?q=coffee&location=${byId[0].google_id}&api_key=${key}`);
    t.equal(viaId.status, 200, 'a location by its google_id');
    t.match(((await viaId.json()) as Json).search_parameters, {
      location_used: byId[0].canonical_name.replace(/ *, */g, ','),
    });
  });

  t.test('legacy google-search-results-nodejs › json, account and location through its global agent', async (t) => {
    const saved = https.globalAgent;
    https.globalAgent = localAgent(svc.url);
    t.teardown(() => {
      https.globalAgent = saved;
    });
    const { GoogleSearch } = require('google-search-results-nodejs') as {
      GoogleSearch: new (
        key: string,
      ) => {
        json(p: Json, cb: (d: Json) => void): void;
        account(cb: (d: Json) => void): void;
        location(q: string, limit: number, cb: (d: Json[]) => void): void;
      };
    };
    const search = new GoogleSearch(key);
    const data = await new Promise<Json>((resolve) => search.json({ q: 'coffee', location: 'Austin, Texas' }, resolve));
    t.equal(data.search_metadata.status, 'Success');
    // the README quick start's form
    const tx = await new Promise<Json>((resolve) => search.json({ q: 'coffee', location: 'Austin, TX' }, resolve));
    t.equal(tx.search_metadata.status, 'Success', 'Austin, TX');
    t.equal(tx.search_parameters.location_used, 'Austin,Texas,United States');
    t.ok(data.organic_results.length > 50);
    const info = await new Promise<Json>((resolve) => search.account(resolve));
    t.equal(info.plan_id, 'pro');
    const places = await new Promise<Json[]>((resolve) => search.location('Austin', 2, resolve));
    t.equal(places.length, 2);
  });

  t.test(
    'Python serpapi client › search, pagination and errors (BASE_DOMAIN pointed here)',
    { skip: pythonMissing },
    async (t) => {
      const script = `
import json, sys, serpapi
serpapi.HTTPClient.BASE_DOMAIN = sys.argv[1]
client = serpapi.Client(api_key=sys.argv[2])
r = client.search(q="coffee", engine="google", num=10)
pages = [len(p["organic_results"]) for p in r.yield_pages(max_pages=3)]
try:
    serpapi.Client(api_key="sk_wrong").search(q="coffee", engine="google")
    err = None
except serpapi.HTTPError as e:
    err = [e.status_code, e.error]
print(json.dumps({"status": r["search_metadata"]["status"], "pages": pages, "err": err}))
`;
      const { stdout } = await run('python3', ['-c', script, svc.url, key], { timeout: 120_000 });
      const out = JSON.parse(stdout.trim()) as Json;
      t.equal(out.status, 'Success');
      t.same(out.pages, [10, 10, 10], 'yield_pages followed our next links');
      t.match(out.err, [401, /Invalid API key/]);
    },
  );
});
