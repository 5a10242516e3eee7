import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import {
  commandLines,
  docCommandsUnavailable,
  type NotRun,
  openDocSandbox,
  runDocument,
  shellBlocks,
  staleNotRun,
} from '../support/docCommands.js';
import { fixturesMissing } from '../support/fixtures.js';

/**
 * Every shell block of the README and of docs/ runs as written, in order, with bash, against the fake Google
 * (docs/testing.md#the-documents-commands); docs/distributed.md's run in docCommandsCluster.test.ts (a cluster of its
 * own, in parallel with this file). The documents that continue the README's walk-through (its service, fake Google
 * and `$KEY`) run after it in its sandbox; the others start their own. A failure names the document, the block and
 * its line, and shows what it printed.
 */
const root = join(import.meta.dirname, '..', '..');

/** run after the README, in its sandbox, in this order: each says it continues the README's walk-through */
const AFTER_README = ['docs/cli.md', 'docs/compat.md', 'docs/mcp.md', 'docs/operations.md'];
/** each in a sandbox of its own: it starts its own fake Google and service */
const ON_THEIR_OWN = ['docs/rank-tracking.md', 'docs/webhooks.md', 'docs/locations.md'];
/** docCommandsCluster.test.ts */
const CLUSTER = ['docs/distributed.md'];
/** documents whose every block is listed below as not run */
const NONE_RUN = ['docs/style.md', 'docs/testing.md'];

const NOT_RUN: NotRun[] = [
  {
    doc: 'README.md',
    starts: 'npm install && npm start',
    why: 'the install and a plain npm start against live Google, and `npm test`, the suite this test is part of; the walk-through after it is the same service offline',
  },
  {
    doc: 'docs/operations.md',
    starts: 'npx serp-api projections rebuild',
    why: 'it refuses while a service runs on the data directory, and the walk-through’s service is running; test/integration/rebuild.test.ts and test/e2e/locationTruth.test.ts run it',
  },
  {
    doc: 'docs/operations.md',
    starts: 'npm run soak',
    why: 'a soak runs for minutes (its own service, fake Google and, with --cluster, a cluster), past a block’s 120 s; test/soak/embedded.test.ts and test/soak/cluster.test.ts run it',
  },
  {
    doc: 'docs/style.md',
    starts: 'npm test',
    why: 'the suite, or files of it, which this test is part of',
  },
  {
    doc: 'docs/testing.md',
    starts: 'npm test',
    why: 'the suite, or files of it, which this test is part of',
  },
];

const DOCS = ['README.md', ...AFTER_README, ...ON_THEIR_OWN, ...NONE_RUN];
const missing = fixturesMissing() ?? docCommandsUnavailable();

t.test(
  'every document with shell blocks is run by a doc-command test, or its blocks are listed as not run',
  async (t) => {
    const withBlocks = [
      'README.md',
      ...readdirSync(join(root, 'docs'))
        .filter((f) => f.endsWith('.md'))
        .map((f) => `docs/${f}`),
    ].filter((doc) => shellBlocks(doc, readFileSync(join(root, doc), 'utf8')).length > 0);
    t.same(withBlocks.sort(), [...DOCS, ...CLUSTER].sort(), 'the documents with shell blocks, each in one list above');
    for (const doc of NONE_RUN) {
      const blocks = shellBlocks(doc, readFileSync(join(root, doc), 'utf8'));
      t.ok(
        blocks.every((b) => NOT_RUN.some((r) => r.doc === doc && b.text.trimStart().startsWith(r.starts))),
        `${doc}: every block is listed as not run`,
      );
    }
    t.same(staleNotRun(NOT_RUN, DOCS), [], 'every block left out is still in its document');
  },
);

t.test('the documents’ shell blocks run as written', { skip: missing }, async (t) => {
  // two at a time: the README's walk-through beside the documents that start their own service, one after another.
  // Each has a copy of the checkout, ports and servers of its own (support/docCommands.ts), and much of a document's
  // time is waiting (a server's start, a poll's pause), not work
  t.jobs = 2;
  void t.test('README.md, then the documents that continue its walk-through', async (t) => {
    const sandbox = await openDocSandbox(t);
    await t.test('README.md', async (t) => {
      const run = await sandbox.run(t, 'README.md', { notRun: NOT_RUN });
      // the command `npm run fake-google` prints is the one the README gives for the second terminal
      const fake = run.blocks.find((b) => commandLines(b.text)[0]?.startsWith('npm run fake-google'));
      const service = run.blocks.find((b) => /SERP_GOOGLE_ORIGIN=\S+ .*npm start/.test(b.text));
      const printed = /^ {2}(SERP_GOOGLE_ORIGIN=.*npm start)$/m.exec(run.serverOutput.get(fake?.n ?? 0) ?? '')?.[1];
      t.equal(
        printed?.replace(`:${run.ports.google}`, ':8090'),
        service ? commandLines(service.text)[0] : undefined,
        'npm run fake-google prints the README’s service command',
      );
    });
    for (const doc of AFTER_README) {
      await t.test(doc, async (t) => {
        await sandbox.run(t, doc, { notRun: NOT_RUN });
      });
    }
  });
  void t.test('the documents that start their own service, one after another', async (t) => {
    for (const doc of ON_THEIR_OWN) {
      await t.test(doc, async (t) => {
        await runDocument(t, doc, { notRun: NOT_RUN });
      });
    }
  });
});
