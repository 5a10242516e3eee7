import t from 'tap';
import { docCommandsUnavailable, type NotRun, runDocument, staleNotRun } from '../support/docCommands.js';
import { fixturesMissing } from '../support/fixtures.js';
import { natsUnavailable } from '../support/nats.js';

/**
 * docs/distributed.md's shell blocks run as written, in order, with bash: the fake Google, `npm run cluster` (three
 * nats-server nodes and six role processes) and the commands against it (docs/testing.md#the-documents-commands).
 * A file of its own, beside docCommands.test.ts, so the two run side by side under tap's two jobs.
 */
const DOCS = ['docs/distributed.md'];

const NOT_RUN: NotRun[] = [
  {
    doc: 'docs/distributed.md',
    starts: "SERP_KURRENTDB_URL='kurrentdb://",
    why: 'it needs a KurrentDB server, which cannot run on this project’s machines (docs/testing.md#the-allow-list-testskipsjson)',
  },
];

const missing = fixturesMissing() ?? natsUnavailable() ?? docCommandsUnavailable();

t.test('docs/distributed.md’s shell blocks run as written', { skip: missing }, async (t) => {
  t.same(staleNotRun(NOT_RUN, DOCS), [], 'every block left out is still in its document');
  await runDocument(t, 'docs/distributed.md', { notRun: NOT_RUN });
});
