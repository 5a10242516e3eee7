import { brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import t from 'tap';
import { readModelQueries } from '../../projections/index.js';
import { etagOf } from '../../services/answers/encoding.js';
import { renderJob } from '../../services/answers/render.js';
import { openStores } from '../../services/compose/embedded/core.js';
import { loadOrCreateSecrets } from '../../services/compose/embedded/secrets.js';
import { loadConfig } from '../../services/config/config.js';
import { createTargetingResolver } from '../../services/crawler/targeting.js';
import { judgeWith } from '../../services/geo/locationCheck.js';
import { createLocationResolver } from '../../services/geo/locations.js';
import { PROJECTOR_CHECKPOINT } from '../../services/projector/projector.js';
import { startPipelineThread } from '../../services/threads/pipelineThread.js';
import { buildTestApp } from '../support/app.js';
import { startFakeGoogle } from '../support/fakeGoogle.js';
import { fixturesMissing } from '../support/fixtures.js';
import { pollJob, removeDir, startService, submit, tempDataDir, UNPACED } from '../support/service.js';

/**
 * The pipeline thread's side of the protocol (pipelineThread.ts), from the HTTP thread's seat: a finished result
 * rendered there is the bytes renderJob makes here, with the same ETag and a compressed form that inflates to them;
 * a job with no result renders nothing (the caller renders itself); the queue answers its depth; a position this
 * thread's store commits is projected there and `waitFor` resolves; after `close` nothing is asked of it; and the
 * `/v1` route sends what the thread rendered, asking once per stored answer and rendering itself when it has none.
 */
const ADMIN = 'pipeline-thread-integration-admin';

t.test('pipeline thread: render, queue depth, projected positions, close', { skip: fixturesMissing() }, async (t) => {
  const google = await startFakeGoogle();
  const data = tempDataDir('pipeline-proto');
  t.teardown(async () => {
    await google.close();
    removeDir(data);
  });
  const env = { SERP_GOOGLE_ORIGIN: google.origin, SERP_ADMIN_TOKEN: ADMIN, ...UNPACED };
  // a finished job in the data directory, made by the service as shipped
  const svc = await startService(data, env);
  const { key } = (await (
    await fetch(`${svc.url}/admin/api/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tier: 'pro' }),
    })
  ).json()) as { key: string };
  const { job_id } = (await (await submit(svc.url, key, { keyword: 'coffee' })).json()) as { job_id: string };
  t.equal((await pollJob(svc.url, key, job_id, 'html')).status, 200);
  await svc.stop();

  const config = loadConfig({ ...env, SERP_PIPELINE_THREAD: '1', SERP_LOG_LEVEL: 'silent' }, { dataDir: data });
  const { secrets } = loadOrCreateSecrets(data, { adminToken: ADMIN });
  const stores = openStores(data);
  const queries = readModelQueries(stores.readModels);
  const locations = createLocationResolver(data);
  const failures: string[] = [];
  const pipeline = startPipelineThread({
    setup: { config, logger: false },
    projectedAt: stores.readModels.checkpoint(PROJECTOR_CHECKPOINT),
    onAppended: (position) => stores.eventStore.appendedElsewhere(position),
    resolveTargeting: createTargetingResolver(locations),
    judgeLocation: judgeWith({ resolve: (name) => locations.resolveLocation(name) }),
    onFailed: (err) => failures.push(err.message),
  });
  t.teardown(async () => {
    await pipeline.close();
    await stores.close();
    locations.close();
  });
  await pipeline.ready;
  t.match(
    await pipeline.metricsText(),
    /^# HELP serp_retention_sweeps_total /m,
    'the background workers’ metrics come from the thread',
  );

  const job = queries.jobs.byId(job_id);
  if (!job) throw new Error('the finished job is not in the read models');
  const baseUrl = 'http://127.0.0.1:1';
  const here = (output: 'json' | 'compat', start?: number) => {
    const r = renderJob(
      {
        linkSecret: secrets.linkSecret,
        presignTtlS: config.presignTtlS,
        resultOf: (j) => queries.results.byJobId(j.sourceJobId ?? j.jobId),
        hasResult: (j) => queries.results.has(j.sourceJobId ?? j.jobId),
      },
      job,
      output,
      { start, baseUrl },
    );
    if (!('json' in r)) throw new Error('no result rendered here');
    return typeof r.json === 'string' ? Buffer.from(r.json) : r.json;
  };

  const json = await pipeline.renderElsewhere(job, 'json', { baseUrl, encoding: 'br' });
  if (!json) throw new Error('the thread rendered nothing');
  const expected = here('json');
  t.ok(json.json.equals(expected), `the same ${expected.length} bytes as a render on this thread`);
  t.equal(json.etag, etagOf(expected), 'the ETag of those bytes');
  t.equal(json.compressed?.encoding, 'br');
  t.ok(brotliDecompressSync(json.compressed?.bytes ?? Buffer.alloc(0)).equals(expected), 'br inflates to them');

  const compat = await pipeline.renderElsewhere(job, 'compat', { baseUrl, start: 10, encoding: 'gzip' });
  t.ok(compat?.json.equals(here('compat', 10)), 'compat with start: the same bytes too');
  t.ok(gunzipSync(compat?.compressed?.bytes ?? Buffer.alloc(0)).equals(compat?.json ?? Buffer.alloc(1)), 'gzip too');
  const plain = await pipeline.renderElsewhere(job, 'json', { baseUrl, start: 20 });
  t.equal(plain?.compressed, undefined, 'no encoding asked, none made');

  const missing = await pipeline.renderElsewhere({ ...job, jobId: 'f'.repeat(24) }, 'json', { baseUrl });
  t.equal(missing, undefined, 'a job with no result: nothing, and the caller renders itself');

  const stats = await pipeline.queueStats();
  t.match(stats, { pending: 0, inFlight: 0 }, 'the queue on the thread answers its depth');
  t.same(stats.classes?.live, { pending: 0, inFlight: 0 }, 'and each lane’s');

  // an append on this thread's store is told to the thread, projected there, and waited for here
  const { lastGlobalPosition } = await stores.eventStore.appendToStream('pipeline-test-unknown', [
    { type: 'SomethingThisVersionDoesNotKnow', data: {} },
  ]);
  pipeline.appended(lastGlobalPosition);
  const waited = await Promise.race([
    pipeline.projector.waitFor(lastGlobalPosition).then(() => 'projected'),
    new Promise((r) => setTimeout(() => r('timed out'), 10_000)),
  ]);
  t.equal(waited, 'projected');
  t.ok(stores.readModels.checkpoint(PROJECTOR_CHECKPOINT) >= lastGlobalPosition, 'the checkpoint in the file moved');

  await pipeline.close();
  t.equal(await pipeline.renderElsewhere(job, 'json', { baseUrl }), undefined, 'after close: nothing is asked');
  t.same(failures, [], 'a close is not a failure');

  // the /v1 route asks the thread first and sends what it answers, its ETag and compressed form included; it asks
  // once per stored answer, and renders itself when the thread has nothing
  const calls: Array<{ output: string; start?: number; encoding?: string }> = [];
  const elsewhere = Buffer.from(JSON.stringify({ rendered: 'elsewhere', pad: 'x'.repeat(2_000) }));
  let threadAnswers = true;
  const { app } = await buildTestApp(
    t,
    { SERP_ADMIN_TOKEN: ADMIN },
    {
      dataDir: data,
      renderElsewhere: async (_job, output, opts) => {
        calls.push({ output, start: opts.start, encoding: opts.encoding });
        if (!threadAnswers) return undefined;
        return {
          json: elsewhere,
          etag: '"elsewhere"',
          ...(opts.encoding === 'gzip'
            ? { compressed: { encoding: 'gzip' as const, bytes: gzipSync(elsewhere) } }
            : {}),
        };
      },
    },
  );
  const get = (query: string, headers: Record<string, string> = {}) =>
    app.inject({ url: `/v1/search/${job_id}?${query}`, headers: { 'x-api-key': key, ...headers } });
  const first = await get('output=json', { 'accept-encoding': 'gzip' });
  t.equal(first.statusCode, 200);
  t.equal(first.headers.etag, '"elsewhere"', "the thread's ETag");
  t.equal(first.headers['content-encoding'], 'gzip');
  t.ok(gunzipSync(first.rawPayload).equals(elsewhere), "the thread's bytes, in the thread's gzip");
  t.match(calls, [{ output: 'json', start: undefined, encoding: 'gzip' }]);
  const again = await get('output=json');
  t.ok(again.rawPayload.equals(elsewhere), 'the same stored answer, uncompressed for a client that asks for none');
  t.equal(calls.length, 1, 'asked once: the answer is stored');
  threadAnswers = false;
  const local = await get('output=json&start=10');
  t.equal(calls.length, 2);
  t.match(calls[1], { output: 'json', start: 10 });
  t.ok(local.rawPayload.equals(here('json', 10)), 'nothing from the thread: rendered here');

  // a synchronous submit answered from the cache: its answer is the thread's too, and made here when it has none
  const submitSync = (output: string) =>
    app.inject({
      method: 'POST',
      url: `/v1/search?output=${output}`,
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      payload: { keyword: 'coffee', async: false },
    });
  threadAnswers = true;
  const syncCompat = await submitSync('compat');
  t.equal(syncCompat.statusCode, 200);
  t.ok(syncCompat.rawPayload.equals(elsewhere), "async: false sends the thread's bytes");
  t.match(calls[2], { output: 'compat', start: undefined, encoding: undefined });
  threadAnswers = false;
  const syncJson = await submitSync('json');
  t.equal(calls.length, 4, 'asked again: a cached answer is a job of its own');
  t.match(
    syncJson.json(),
    { search_metadata: { status: 'done', cached: true } },
    'nothing from the thread: rendered here',
  );
});
