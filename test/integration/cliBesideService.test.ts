import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { streams } from '../../contracts/events.js';
import { createSqliteEventStore } from '../../services/adapters/eventStore/sqlite.js';
import { type FakeGoogle, startFakeGoogle } from '../support/fakeGoogle.js';
import { fixturesMissing } from '../support/fixtures.js';
import {
  cli,
  cliResult,
  pollJob,
  type RunningService,
  removeDir,
  startService,
  submit,
  tempDataDir,
} from '../support/service.js';

const missing = fixturesMissing();

/** The CLI as a user sees it, with no admin token from the environment. */
const cliRun = (args: string[], env: NodeJS.ProcessEnv = {}) => cliResult(args, { SERP_ADMIN_TOKEN: '', ...env });

const ADMIN_LINE = /admin token \(shown once, kept in .*secrets\.json\): (adm_\S+)/g;

t.test('CLI on a fresh data directory, then beside a running service', { skip: missing }, async (t) => {
  const google: FakeGoogle = await startFakeGoogle({});
  const data = tempDataDir('cli-beside');
  const elsewhere = tempDataDir('cli-elsewhere');
  const untouched = join(elsewhere, 'never-created');
  let svc: RunningService | undefined;
  t.teardown(async () => {
    await svc?.stop();
    await google.close();
    removeDir(data);
    removeDir(elsewhere);
  });

  // 1. the first command on a fresh directory creates the secrets and prints the admin token, once
  const created = await cliRun(['keys', 'create', '--tier', 'free', '--json', '--data', data]);
  t.equal(created.code, 0, 'keys create succeeds', { stderr: created.stderr });
  const key = JSON.parse(created.stdout) as { key: string; key_id: string };
  const printed = [...created.stderr.matchAll(ADMIN_LINE)].map((m) => m[1]);
  const stored = JSON.parse(readFileSync(join(data, 'secrets.json'), 'utf8')) as { adminToken: string };
  t.same(printed, [stored.adminToken], 'keys create printed the stored admin token once, on stderr');

  // 2. `keys limits ID` with nothing to change is a usage error, not a silent no-op
  const noChange = await cliRun(['keys', 'limits', key.key_id, '--data', data]);
  t.not(noChange.code, 0, 'non-zero exit');
  t.match(noChange.stderr, 'give at least one of --tier, --quota, --rate');

  // 3. `--base-url` to a dead port is an error and leaves the local data directory alone
  const dead = await cliRun(['keys', 'list', '--base-url', 'http://127.0.0.1:9', '--data', untouched]);
  t.not(dead.code, 0, 'non-zero exit');
  t.match(dead.stderr, 'no service answers at http://127.0.0.1:9');
  t.notOk(existsSync(untouched), 'no data directory created');

  svc = await startService(data, { SERP_GOOGLE_ORIGIN: google.origin });
  const url = svc.url;
  t.notMatch(svc.stderr(), 'admin token', 'serve prints no token: the CLI already did when it made it');

  const usage = async () =>
    (
      (await (await fetch(`${url}/v1/usage`, { headers: { 'x-api-key': key.key } })).json()) as {
        used_this_month: number;
      }
    ).used_this_month;
  const admin = (method: string, path: string, body?: unknown) =>
    fetch(`${url}/admin/api${path}`, {
      method,
      headers: { authorization: `Bearer ${stored.adminToken}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  await t.test('admin api: PATCH refuses an unknown tier and an empty change with 422', async (t) => {
    const unknown = await admin('PATCH', `/keys/${key.key_id}`, { tier: 'platinum' });
    t.equal(unknown.status, 422);
    t.match(await unknown.json(), { code: 'SERP_ADMIN_UNKNOWN_TIER', detail: /unknown tier "platinum"/ });
    const empty = await admin('PATCH', `/keys/${key.key_id}`, {});
    t.equal(empty.status, 422);
    t.match(await empty.json(), { detail: /give at least one of tier, monthly_quota, rate_limit_per_min/ });
    const ok = await admin('PATCH', `/keys/${key.key_id}`, { rate_limit_per_min: 1000 });
    t.equal(ok.status, 200);
    const store = createSqliteEventStore({ path: join(data, 'events.db') });
    const last = (await store.readStream(streams.apiKey(key.key_id))).events.at(-1)!;
    await store.close();
    t.equal(last.type, 'ApiKeyLimitsChanged');
    t.match(last.metadata.correlationId, /^req_/, 'the event carries the request id as its correlation id');
  });

  await t.test('keys --base-url: a token is needed, and none is made locally', async (t) => {
    const noToken = await cliRun(['keys', 'list', '--base-url', url, '--data', untouched]);
    t.not(noToken.code, 0, 'non-zero exit without a token');
    t.match(noToken.stderr, 'give --admin-token or set SERP_ADMIN_TOKEN');
    const listed = await cliRun(['keys', 'list', '--json', '--base-url', url, '--data', untouched], {
      SERP_ADMIN_TOKEN: stored.adminToken,
    });
    t.equal(listed.code, 0, 'with SERP_ADMIN_TOKEN it lists the keys', { stderr: listed.stderr });
    t.same(
      (JSON.parse(listed.stdout) as Array<{ key_id: string }>).map((k) => k.key_id),
      [key.key_id],
    );
    t.notOk(existsSync(untouched), 'still no local data directory, no secrets.json');
  });

  await t.test('audit usage --repair beside the service releases through its projector, once', async (t) => {
    for (const keyword of ['coffee', 'tea']) {
      const { job_id } = (await (await submit(url, key.key, { keyword })).json()) as { job_id: string };
      t.equal((await pollJob(url, key.key, job_id)).status, 200, `${keyword} crawled`);
    }
    t.equal(await usage(), 2);

    // a reservation whose job was never submitted (a crash between the two appends), as another process writes it
    const now = new Date().toISOString();
    const month = now.slice(0, 4) + now.slice(5, 7);
    const stream = streams.usage(key.key_id, month);
    const store = createSqliteEventStore({ path: join(data, 'events.db') });
    const { currentVersion } = await store.readStream(stream);
    const orphan = 'f'.repeat(24);
    await store.appendToStream(
      stream,
      [
        {
          type: 'QuotaReserved',
          data: { keyId: key.key_id, month, jobId: orphan, reservedAt: now },
          metadata: { eventId: randomUUID() },
        },
      ],
      { expectedVersion: currentVersion },
    );
    for (let i = 0; i < 100 && (await usage()) !== 3; i++) await new Promise((r) => setTimeout(r, 50));
    t.equal(await usage(), 3, 'the service projected the orphan reservation');

    const bad = await cliRun(['audit', 'usage', '--month', now.slice(0, 7), '--grace-seconds', 'abc', '--data', data]);
    t.not(bad.code, 0, '--grace-seconds abc is refused');
    t.match(bad.stderr, /--grace-seconds <n>' argument 'abc' is invalid/);

    const audit = JSON.parse(
      await cli([
        'audit',
        'usage',
        '--month',
        now.slice(0, 7),
        '--repair',
        '--grace-seconds',
        '0',
        '--json',
        '--data',
        data,
      ]),
    ) as Array<{ keyId: string; reserved: number; released: number; projected: number; discrepancies: unknown[] }>;
    t.match(audit, [
      {
        keyId: key.key_id,
        reserved: 3,
        released: 1,
        projected: 3,
        discrepancies: [{ jobId: orphan, kind: 'reservation-without-job' }],
      },
    ]);

    const { events } = await store.readStream(stream);
    await store.close();
    const count = (type: string) => events.filter((e) => e.type === type).length;
    t.equal(count('QuotaReleased'), 1, 'one release appended');
    const logUsed = count('QuotaReserved') - count('QuotaReleased');
    t.equal(logUsed, 2);
    t.equal(await usage(), logUsed, '/v1/usage equals the log as soon as the audit exits: applied once, not twice');
  });

  await t.test('projections rebuild refuses while the service runs', async (t) => {
    const refused = await cliRun(['projections', 'rebuild', '--data', data]);
    t.not(refused.code, 0, 'non-zero exit');
    t.match(refused.stderr, 'stop the service first');
    t.equal(await usage(), 2, 'the read models are untouched');
  });

  await t.test("keys limits --tier brings the tier's quota and rate, and --rate wins over it", async (t) => {
    const spare = JSON.parse(await cli(['keys', 'create', '--tier', 'free', '--json', '--data', data])) as {
      key_id: string;
    };
    const pro = JSON.parse(await cli(['keys', 'limits', spare.key_id, '--tier', 'pro', '--json', '--data', data])) as {
      tier: string;
      monthly_quota: number;
      rate_limit_per_min: number;
    };
    t.same(
      [pro.tier, pro.monthly_quota, pro.rate_limit_per_min],
      ['pro', 50_000, 300],
      "pro, with pro's 50,000 searches a month and 300 a minute",
    );
    const starter = JSON.parse(
      await cli(['keys', 'limits', spare.key_id, '--tier', 'starter', '--rate', '7', '--json', '--data', data]),
    ) as { tier: string; monthly_quota: number; rate_limit_per_min: number };
    t.same(
      [starter.tier, starter.monthly_quota, starter.rate_limit_per_min],
      ['starter', 5_000, 7],
      "starter's quota, the rate given",
    );
  });

  await t.test('search and monitors find the service running on the data directory, on its own port', async (t) => {
    t.notMatch(url, /:8080$/, 'the service is not on the default port');
    const env = { SERP_API_BASE_URL: '', SERP_API_KEY: key.key };
    const found = await cliRun(['search', 'coffee', '--depth', '10', '--data', data], env);
    t.equal(found.code, 0, 'search exits 0', { stderr: found.stderr });
    t.match(JSON.parse(found.stdout), { search_metadata: { status: 'done' } }, 'and prints the finished search');
    const listed = await cliRun(['monitors', 'list', '--json', '--data', data], env);
    t.equal(listed.code, 0, 'monitors list exits 0', { stderr: listed.stderr });
    t.same(JSON.parse(listed.stdout), [], "and lists the key's (no) monitors");
  });
});
