import t from 'tap';
import { commandLines, docCommandsUnavailable, type NotRun, runDocument, staleNotRun } from '../support/docCommands.js';
import { fixturesMissing } from '../support/fixtures.js';

/**
 * Every shell block of the README, docs/rank-tracking.md and docs/webhooks.md runs as written, in order, with bash,
 * against the fake Google (docs/testing.md#the-documents-commands); docs/distributed.md's run in
 * docCommandsCluster.test.ts (a cluster of its own, in parallel with this file). A failure names the document, the
 * block and its line, and shows what it printed.
 */
const DOCS = ['README.md', 'docs/rank-tracking.md', 'docs/webhooks.md'];

const NOT_RUN: NotRun[] = [
  {
    doc: 'README.md',
    starts: 'npm install && npm start',
    why: 'the install and a plain npm start against live Google, and `npm test`, the suite this test is part of; the walk-through after it is the same service offline',
  },
];

const missing = fixturesMissing() ?? docCommandsUnavailable();

t.test('the documents’ shell blocks run as written', { skip: missing }, async (t) => {
  t.same(staleNotRun(NOT_RUN, DOCS), [], 'every block left out is still in its document');

  await t.test('README.md', async (t) => {
    const run = await runDocument(t, 'README.md', { notRun: NOT_RUN });
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
  await t.test('docs/rank-tracking.md', async (t) => {
    await runDocument(t, 'docs/rank-tracking.md', { notRun: NOT_RUN });
  });
  await t.test('docs/webhooks.md', async (t) => {
    await runDocument(t, 'docs/webhooks.md', { notRun: NOT_RUN });
  });
});
