import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { CreateMonitorBody, PatchMonitorBody } from '../../contracts/monitors.js';
import { WEBHOOK_EVENT_TYPES } from '../../contracts/webhookEvents.js';
import { fieldOf, SERVE_VARIABLES, VARIABLES } from '../../services/config/schema.js';
import { REACTORS } from '../../services/reactor/reactor.js';
import {
  defaultFindings,
  ENV_READERS,
  followerFindings,
  reactorFindings,
  settingFindings,
  webhookTypeFindings,
} from '../support/docsClaims.js';
import { codeSpans, tableOf } from '../support/docsInventory.js';
import { reader, repositoryFiles } from '../support/docsRules.js';

/**
 * The documents' claims about how the code is built, each held against the sources: the document still says it, and
 * the code does it (test/support/docsClaims.ts names what breaks one). The recipes ("a new … is …") are held the same
 * way, so what a recipe asks for fails a fast test, never only an end-to-end run.
 */
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const read = (path: string) => reader(root)(path) ?? '';
/** the repository's files but this one, whose planted examples below break every claim on purpose */
const files = new Map([...repositoryFiles(root)].filter(([path]) => path !== 'test/architecture/docsClaims.test.ts'));
/** a document's text on one line, so a claim wrapped across lines is found */
const said = (doc: string) => read(doc).replace(/\s+/g, ' ');
const CONFIG_FIELDS = Object.keys(SERVE_VARIABLES).map(fieldOf);

t.test('the documents › "every log follower is a reactor"', async (t) => {
  t.match(said('docs/architecture.md'), /\*\*Every log follower is a reactor\*\* \(`createReactor`/, 'the claim');
  t.same(followerFindings(files), [], 'no module of services/ follows the log or keeps a checkpoint but createReactor');
});

t.test('the documents › "each reactor runs the conformance suite"', async (t) => {
  t.match(said('docs/architecture.md'), /Each reactor runs the conformance suite/, 'the claim');
  t.same(
    reactorFindings(files, Object.keys(REACTORS)),
    [],
    'every reactor created is in REACTORS, every name there is created, and the suite walks them',
  );
});

t.test('the documents › "every setting goes through one schema"', async (t) => {
  t.match(said('docs/architecture.md'), /A variable is declared once, in `services\/config\/schema\.ts`/, 'the claim');
  t.match(said('docs/style.md'), /`process\.env` is read in one place/, 'and the rule');
  t.same(settingFindings(files, VARIABLES), [], 'every SERP_ variable read through the schema, and declared there');
  for (const path of Object.keys(ENV_READERS)) t.ok(files.has(path), `${path}, allowed to read process.env, exists`);
});

t.test('the documents › "a consumer has no default of its own"', async (t) => {
  t.match(said('docs/architecture.md'), /has no default of its own/, 'the claim');
  t.same(defaultFindings(files, CONFIG_FIELDS), [], 'no setting given a number or a flag outside the schema');
});

t.test('the recipes › a new webhook event type: the end-to-end test is asked to deliver it', async (t) => {
  t.match(said('docs/webhooks.md'), /\*\*A new event type\*\*/, 'the recipe');
  t.same(
    webhookTypeFindings(read('test/e2e/webhooks.test.ts'), WEBHOOK_EVENT_TYPES),
    [],
    'test/e2e/webhooks.test.ts waits for a delivery of every type of the registry',
  );
});

t.test('the recipes › a new monitor field: the API table names every field of the bodies', async (t) => {
  t.match(said('docs/rank-tracking.md'), /\*\*A new monitor field\*\*/, 'the recipe');
  const rows =
    tableOf(read('docs/rank-tracking.md'), 'the-api-v1monitors-in-the-live-openapi-under-rank-tracking') ?? [];
  const row = (route: string) => rows.find((r) => r[0]?.startsWith(`\`${route}`))?.[1] ?? '';
  const missing = (cell: string, fields: string[]) => {
    // every word of the cell's code spans: `name, keywords[], domains[]`, `lat`+`lon`+`radius`, `ctr_curve?`
    const named = new Set(codeSpans(cell).flatMap((span) => span.match(/[a-z_]+/g) ?? []));
    return fields.filter((f) => !named.has(f));
  };
  t.ok(rows.length > 0, 'the table is there');
  t.same(missing(row('POST /v1/monitors'), Object.keys(CreateMonitorBody.shape)), [], 'POST names every create field');
  t.same(missing(row('PATCH /v1/monitors/{id}'), Object.keys(PatchMonitorBody.shape)), [], 'PATCH every patch field');
});

t.test('the documents › the claims checks catch what they are for', async (t) => {
  const one = (path: string, text: string) => new Map([[path, text]]);
  t.equal(
    followerFindings(one('services/metrics/x.ts', 'const s = store.subscribeToAll(await store.headPosition(), f);'))
      .length,
    1,
    'a module that subscribes to the log itself',
  );
  t.equal(
    followerFindings(one('services/dispatcher/x.ts', "deps.readModels.commit([], 'mine', position);")).length,
    1,
    'a checkpoint kept by hand',
  );
  t.same(
    followerFindings(one('services/x.ts', '// never store.subscribeToAll(…) here')),
    [],
    'a comment that names it is no follower',
  );
  const suite = [
    'test/conformance/reactors.test.ts',
    'const CASES: Record<ReactorName, Case> = {}; Object.keys(REACTORS)',
  ];
  const withSuite = (path: string, text: string) => new Map([[path, text], suite as [string, string]]);
  t.same(
    reactorFindings(withSuite('services/x.ts', "createReactor({ name: 'new-one', handles: [] }, deps)"), ['new-one']),
    [],
    'a reactor in REACTORS, in a suite walked by name',
  );
  t.equal(
    reactorFindings(withSuite('services/x.ts', "createReactor({ name: 'forgotten', handles: [] }, deps)"), []).length,
    1,
    'a reactor REACTORS does not name',
  );
  t.equal(reactorFindings(withSuite('services/x.ts', ''), ['gone']).length, 1, 'a name no module creates');
  t.equal(
    reactorFindings(one('services/x.ts', "createReactor({ name: 'a' }, d)"), ['a']).length,
    1,
    'a suite that lists its cases by hand',
  );
  t.equal(
    settingFindings(one('test/support/x.ts', 'const log = process.env.SERP_NATS_LOG ? console.error : undefined;'), [
      'SERP_NATS_LOG',
    ]).length,
    1,
    'a setting read from process.env',
  );
  t.same(
    settingFindings(one('test/support/x.ts', "process.env.SERP_TEST_BUILT = '1';"), ['SERP_TEST_BUILT']),
    [],
    'one set for a child process is not read',
  );
  t.equal(
    settingFindings(one('test/x.ts', "await start({ env: { SERP_NOT_DECLARED: '1' } });"), VARIABLES).length,
    1,
    'a variable the schema does not declare',
  );
  t.equal(
    defaultFindings(one('services/x.ts', 'const n = config.crawlerConcurrency ?? 8;'), CONFIG_FIELDS).length,
    1,
    'a fallback of its own',
  );
  t.equal(
    defaultFindings(one('services/x.ts', 'const f = ({ queueAhead = 2 }: Settings) => queueAhead;'), CONFIG_FIELDS)
      .length,
    1,
    'a default where the setting is taken',
  );
  t.equal(
    defaultFindings(one('services/x.ts', 'createInProcessJobQueue({ ackWaitMs: 60_000, maxDeliver: 5 })'), []).length,
    1,
    'a queue with options of its own',
  );
  t.same(
    defaultFindings(one('services/x.ts', 'createInProcessJobQueue(jobQueueOptions(config))'), []),
    [],
    'a queue with the configuration’s',
  );
  t.equal(
    webhookTypeFindings("await receiver.waitFor((r) => ofType(r, '/all', 'search.completed').length > 0);", [
      'search.completed',
      'search.new_kind',
    ]).length,
    1,
    'a type no subtest waits for',
  );
});
