import t from 'tap';
import { fixturesMissing } from '../support/fixtures.js';
import { pollJob, startStack, submit } from '../support/service.js';

/** SERP_CRAWL_THREAD=1 through the service: the crawl worker, the blob writer and the read models as usual. */
t.test(
  'SERP_CRAWL_THREAD=1: a search crawled on the crawl thread, its result and raw HTML served',
  { skip: fixturesMissing() },
  async (t) => {
    const { svc, mintKey } = await startStack(t, { env: { SERP_CRAWL_THREAD: '1' } });
    const { key } = await mintKey(['--tier', 'pro']);
    const headers = { 'x-api-key': key };
    const { job_id } = (await (
      await submit(svc.url, key, { keyword: 'coffee', location: 'Austin, Texas, United States' })
    ).json()) as {
      job_id: string;
    };
    const done = await pollJob(svc.url, key, job_id, 'json');
    t.equal(done.status, 200);
    const result = (await done.json()) as {
      search_metadata: Record<string, unknown>;
      organic_results: unknown[];
    };
    t.match(result.search_metadata, {
      status: 'done',
      pages_fetched: 10,
      targeting: { location: 'Austin,Texas,United States' },
    });
    t.ok(result.organic_results.length >= 90, `organic results: ${result.organic_results.length}`);
    const { html_url } = (await (await fetch(`${svc.url}/v1/search/${job_id}`, { headers })).json()) as {
      html_url: string;
    };
    const raw = await (await fetch(html_url)).text();
    t.equal(raw.match(/<!-- serp-page start=\d+ /g)?.length, 10, 'the raw HTML the thread packed holds every page');
  },
);
