import t from 'tap';
import { fixturesMissing } from '../support/fixtures.js';
import { natsUnavailable } from '../support/nats.js';
import { formatReport, runSoak } from './harness.js';
import { INVARIANTS } from './invariants.js';
import { NOT_YET } from './notYet.js';

/**
 * The short cluster soak CI runs on every push (docs/operations.md#the-soak): three minutes of a three-node
 * nats-server cluster with two api processes, two crawlers, a dispatcher and a projector, against the adversarial fake
 * Google, with a fixed seed's schedule of faults that kills -9 a crawler, the dispatcher and an api process and
 * restarts a NATS node. Each invariant is one assertion; a failure carries the whole report.
 */
const SEED = 20261208;
const unavailable = natsUnavailable() ?? fixturesMissing('serp');
if (unavailable) {
  t.plan(0, unavailable);
} else {
  t.setTimeout(15 * 60_000);
  const report = await runSoak({ minutes: 3, seed: SEED, cluster: true });
  const text = formatReport(report);
  t.comment(text);
  t.test('a cluster keeps every invariant through three minutes of faults and process kills', async (t) => {
    t.same(
      report.invariants.map((i) => i.name),
      [...INVARIANTS],
      'every invariant was checked',
    );
    t.ok(
      ['kill_crawler', 'kill_dispatcher', 'kill_api', 'nats_restart'].every((k) =>
        report.faults.some((f) => f.fault.kind === k && f.detail?.includes('restarted')),
      ),
      'a crawler, the dispatcher and an api were killed -9 and a NATS node restarted, each started again',
      { report: text },
    );
    // named by the invariant alone (the figures are in its summary): a name the allow-list of todos can hold
    for (const i of report.invariants) {
      const todo = NOT_YET.cluster[i.name as (typeof INVARIANTS)[number]];
      t.ok(i.ok, i.name, { summary: i.summary, report: text, ...(todo ? { todo } : {}) });
    }
  });
}
