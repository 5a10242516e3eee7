import t from 'tap';
import { type FakeGoogle, startFakeGoogle } from '../support/fakeGoogle.js';
import { fixturesMissing } from '../support/fixtures.js';
import { cli, pollJob, removeDir, startService, submit, tempDataDir } from '../support/service.js';

const missing = fixturesMissing();

t.test(
  'kill -9 in the middle of a burst of submits loses no acknowledged job and charges none twice',
  { skip: missing },
  async (t) => {
    const google: FakeGoogle = await startFakeGoogle({});
    const data = tempDataDir();
    t.teardown(async () => {
      await google.close();
      removeDir(data);
    });
    const env = { SERP_GOOGLE_ORIGIN: google.origin, SERP_CRAWLER_CONCURRENCY: '4' };
    const created = JSON.parse(await cli(['keys', 'create', '--tier', 'enterprise', '--json', '--data', data]));
    const key: string = created.key;

    const first = await startService(data, env);
    const acknowledged: string[] = [];
    let errors = 0;
    let killing = false;
    // one page a search (depth 10): the subject is the log and the charges, not the crawl, and the restarted
    // service must finish every acknowledged job before the test can count them. Sixteen clients submit without pause
    // until the crash, so submits are always in flight when it comes, however fast or slow the machine is.
    let next = 0;
    const client = async () => {
      while (!killing && next < 2_000) {
        const i = next++;
        try {
          const res = await submit(first.url, key, { keyword: `durable ${i}`, depth: 10 });
          if (res.status === 202) acknowledged.push(((await res.json()) as { job_id: string }).job_id);
          else t.fail(`unexpected ${res.status}: ${await res.text()}`);
        } catch {
          errors++; // the connection died with the server: not acknowledged
        }
      }
    };
    const burst = Array.from({ length: 16 }, client);
    // crash once the burst is well under way: some submits acknowledged, others in flight
    for (let waited = 0; acknowledged.length < 30 && waited < 30_000; waited += 20) {
      await new Promise((r) => setTimeout(r, 20));
    }
    await first.kill();
    // submits sent while the process died are refused: they count with the ones it cut off
    killing = true;
    await Promise.all(burst);
    t.ok(acknowledged.length > 0, `${acknowledged.length} submits acknowledged before the crash`);
    t.ok(errors > 0, `${errors} submits cut off by the crash`);

    const second = await startService(data, env);
    t.teardown(() => second.stop());
    const unfinished: string[] = [];
    for (const jobId of acknowledged) {
      const res = await pollJob(second.url, key, jobId, 'json', 120_000);
      const body = (await res.json()) as { search_metadata?: { status: string }; status?: string };
      const status = body.search_metadata?.status ?? body.status;
      if (res.status !== 200 || !['done', 'partial', 'failed'].includes(status ?? '')) {
        unfinished.push(`${jobId}: ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
      }
    }
    t.same(unfinished, [], `all ${acknowledged.length} acknowledged jobs reached a terminal state after the restart`);

    const month = new Date().toISOString().slice(0, 7);
    const [audit] = JSON.parse(await cli(['audit', 'usage', '--month', month, '--json', '--data', data]));
    t.ok(audit.reserved >= acknowledged.length, 'every acknowledged job holds a reservation');
    t.equal(
      audit.discrepancies.filter((d: { kind: string }) => d.kind !== 'reservation-without-job').length,
      0,
      'no discrepancy but reservations cut off between their two appends',
    );
    const usage = (await (await fetch(`${second.url}/v1/usage`, { headers: { 'x-api-key': key } })).json()) as Record<
      string,
      number
    >;
    t.equal(usage.used_this_month, audit.reserved - audit.released, 'charged once per reservation, never twice');
  },
);
