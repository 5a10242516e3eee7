import { Counter } from 'prom-client';
import t from 'tap';
import {
  BACKGROUND_WORKERS,
  type BackgroundWorkerDefinition,
  createWriteSideRegistry,
  startBackgroundWorkers,
  type WriteSideContext,
} from '../../services/compose/backgroundWorkers.js';

/**
 * The write side's one way to run background work (docs/architecture.md, "Background workers"): workers start in
 * order with the context, stop in reverse, a worker that fails to start stops the ones before it, and a stop that
 * fails is logged without keeping the others from stopping.
 */
const contextWith = (lines: string[]) =>
  ({
    log: (msg: string, fields?: Record<string, unknown>) => lines.push(`${msg} ${JSON.stringify(fields ?? {})}`),
    metrics: createWriteSideRegistry(),
  }) as unknown as WriteSideContext;

const recording = (events: string[], name: string, failOn?: 'start' | 'stop'): BackgroundWorkerDefinition => ({
  name,
  create: (ctx) => {
    const runs = new Counter({ name: `test_${name}_runs_total`, help: 'runs', registers: [ctx.metrics] });
    return {
      start: async () => {
        if (failOn === 'start') throw new Error(`${name} cannot start`);
        runs.inc();
        events.push(`start ${name}`);
      },
      stop: async () => {
        events.push(`stop ${name}`);
        if (failOn === 'stop') throw new Error(`${name} cannot stop`);
      },
    };
  },
});

t.test('background workers › start in order with the context, stop in reverse', async (t) => {
  const events: string[] = [];
  const lines: string[] = [];
  const ctx = contextWith(lines);
  const running = await startBackgroundWorkers(ctx, [
    recording(events, 'a'),
    recording(events, 'b', 'stop'),
    recording(events, 'c'),
  ]);
  t.same(events, ['start a', 'start b', 'start c']);
  t.match(await ctx.metrics.metrics(), /^test_a_runs_total 1$/m, 'a worker’s metrics are in the write side’s registry');
  await running.stop();
  t.same(events.slice(3), ['stop c', 'stop b', 'stop a'], 'b failing to stop still lets a stop');
  t.match(lines, [/background worker failed to stop .*"worker":"b".*b cannot stop/]);
  await running.stop();
  t.equal(events.length, 6, 'a second stop stops nothing again');
});

t.test('background workers › one that fails to start stops the ones started, and the error is thrown', async (t) => {
  const events: string[] = [];
  await t.rejects(
    startBackgroundWorkers(contextWith([]), [recording(events, 'a'), recording(events, 'b', 'start')]),
    /b cannot start/,
  );
  t.same(events, ['start a', 'stop a']);
});

t.test(
  'background workers › the write side runs the dispatcher, rank tracking’s monitor worker, the webhook delivery worker, then the retention sweeps',
  async (t) => {
    t.same(
      BACKGROUND_WORKERS.map((w) => w.name),
      ['dispatcher', 'monitors', 'webhooks', 'retention'],
    );
  },
);
