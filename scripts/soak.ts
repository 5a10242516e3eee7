/**
 * The weather machine (docs/operations.md#the-soak): the real service against an adversarial fake Google, proxies that
 * die and webhook receivers that hang, with a seeded schedule of faults and traffic on every lane, checked against
 * its invariants while it runs. Prints the report; exits 1 when an invariant failed (the report names the seed and
 * the events that broke it), 2 when the soak itself could not run.
 *
 *   npm run soak -- --minutes 3 --seed 7             # one embedded `serve`
 *   npm run soak -- --minutes 3 --seed 7 --cluster   # three nats-server nodes and every role, with kills
 *
 * It runs the build in dist/ when it is at least as new as every source (as `npm start` does), else the sources.
 */
import { writeFileSync } from 'node:fs';
import { Command, InvalidArgumentError } from 'commander';
import { processEnv } from '../services/config/env.js';
import { formatReport, runSoak } from '../test/soak/harness.js';
import { freshBuild } from '../test/soak/stack.js';
import { fixturesMissing } from '../test/support/fixtures.js';
import { natsUnavailable } from '../test/support/nats.js';

const positive = (value: string) => {
  const n = Number(value);
  if (!(n > 0) || !Number.isFinite(n)) throw new InvalidArgumentError('a positive number');
  return n;
};
const whole = (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 2 ** 31 - 1) throw new InvalidArgumentError('a whole number (0 to 2^31-1)');
  return n;
};

const program = new Command('soak')
  .description('run the service through a seeded schedule of faults and check its invariants')
  .option('--minutes <n>', 'length of the traffic (warm-up, then faults); the drain comes after', positive, 3)
  .option('--seed <n>', 'the schedule of faults and the traffic come from it: the same seed, the same run', whole, 1)
  .option('--cluster', 'a three-node nats-server cluster with every role, and kill -9 of crawler, dispatcher and api')
  .option('--no-faults', 'the same traffic without any fault: a baseline to tell what the faults cost')
  .option('--concurrency <n>', 'live search loops (each about one search a second)', whole, 2)
  .option('--json <file>', 'also write the report as JSON to this file')
  .option('--quiet', 'no progress lines, only the report')
  .parse();

const o = program.opts<{
  minutes: number;
  seed: number;
  cluster?: boolean;
  faults: boolean;
  concurrency: number;
  json?: string;
  quiet?: boolean;
}>();

const missing = fixturesMissing('serp') ?? (o.cluster ? natsUnavailable() : undefined);
if (missing) {
  console.error(`soak: cannot run: ${missing}`);
  process.exit(2);
}
// the build when it is current (as the test runner's SERP_TEST_BUILT=1 does), never a stale one
if (processEnv().SERP_TEST_BUILT === undefined && freshBuild()) process.env.SERP_TEST_BUILT = '1';

try {
  const report = await runSoak({
    minutes: o.minutes,
    seed: o.seed,
    cluster: o.cluster === true,
    faults: o.faults,
    concurrency: Math.max(1, o.concurrency),
    log: o.quiet ? undefined : (line) => console.error(`[${new Date().toISOString().slice(11, 19)}] ${line}`),
  });
  console.log(formatReport(report));
  if (o.json) writeFileSync(o.json, `${JSON.stringify(report, null, 2)}\n`);
  process.exit(report.ok ? 0 : 1);
} catch (err) {
  console.error(`soak: could not run: ${(err as Error).stack ?? String(err)}`);
  process.exit(2);
}
