import type { Test } from 'tap';
import { createSqliteEventStore } from '../../services/adapters/eventStore/sqlite.js';
import { dataPaths, type openCore as OpenCore, openCore } from '../../services/compose/embedded/core.js';
import { loadConfig } from '../../services/config/config.js';
import type { EventStore, RecordedEvent } from '../../services/ports/eventStore.js';
import { REACTORS, type Reactor, type ReactorDeps, type ReactorName } from '../../services/reactor/reactor.js';
import { removeDir, tempDataDir } from '../support/service.js';

export type Core = Awaited<ReturnType<typeof OpenCore>>;

/** One follower of the log under test: how to feed it, how to build it, what it decided. */
export interface ReactorCase {
  name: ReactorName;
  /** what the case needs beside the core (keys, services, a queue), made once per test */
  prepare(core: Core): Promise<CaseEnv>;
}

export interface CaseEnv {
  /** appends the input of the first half (0) or the second half (1) of the stream */
  seed(part: 0 | 1): Promise<void>;
  /**
   * appends an event of a type the reactor handles that does not match its contract, through `foreign`: another
   * process's connection to the log (this process's own appends come from its deciders and are trusted as they are)
   */
  poison(foreign: EventStore): Promise<void>;
  /** a new instance of the reactor (two may run at once) */
  create(deps: ReactorDeps): Reactor;
  /**
   * what was decided so far, one entry per decision, sorted: a decision made twice shows twice. A reactor that
   * decides on the log: every instance's decisions; one that keeps a view in memory (where queued jobs stand, the
   * metrics' counters): the newest instance's view, each thing in it once.
   */
  decisions(): Promise<string[]>;
  /** how many decisions the first half, and the whole input, make */
  expected: [number, number];
  /** lets the reactors' decisions happen (a consumer that starts jobs, …); called once the reactors run */
  drive?(): Promise<void>;
  close?(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * What every reactor (services/reactor/reactor.ts; each name of its REACTORS has a case in reactors.test.ts) must do,
 * over a real embedded core (SQLite log, read models, projector): decide each thing once whatever happens to it. Restarted half way through the stream, replayed from its
 * start, handed an event that breaks its contract, or run twice at once (two dispatcher processes), it ends with the
 * same decisions, each made once.
 */
export const reactorConformance = async (t: Test, c: ReactorCase) => {
  const withCore = async (
    t: Test,
    body: (ctx: {
      core: Core;
      env: CaseEnv;
      deps: (poisoned?: RecordedEvent[]) => ReactorDeps;
      foreign: EventStore;
    }) => Promise<void>,
  ) => {
    const dir = tempDataDir(`reactor-${c.name}`);
    const core = await openCore(loadConfig({}, { dataDir: dir }));
    const foreign = createSqliteEventStore({ path: dataPaths(dir).events });
    const env = await c.prepare(core);
    const running: Reactor[] = [];
    t.teardown(async () => {
      for (const r of running) await r.stop();
      await env.close?.();
      await foreign.close();
      await core.close();
      removeDir(dir);
    });
    const deps = (poisoned?: RecordedEvent[]): ReactorDeps => ({
      eventStore: core.eventStore,
      readModels: core.readModels,
      projected: (p) => core.projector.waitFor(p),
      checkpoint: { ms: 0, events: 1 },
      // a few events a slice, so every batch of the suite is handed over in several
      slice: 3,
      ...(poisoned ? { onPoison: (e: RecordedEvent) => poisoned.push(e) } : {}),
    });
    await body({ core, env, deps, foreign });
  };

  /** waits until the decisions reach `n` (and stay there a moment: a duplicate would show) */
  const settle = async (env: CaseEnv, n: number, what: string) => {
    const deadline = Date.now() + 20_000;
    let got = await env.decisions();
    while (got.length < n && Date.now() < deadline) {
      await env.drive?.();
      await sleep(50);
      got = await env.decisions();
    }
    await env.drive?.();
    await sleep(300);
    got = await env.decisions();
    if (got.length < n) throw new Error(`${c.name}: ${what}: ${got.length} of ${n} decisions`);
    return got;
  };

  // a reactor that starts at the log's head (the metrics) handles what comes after its start, and nothing before:
  // it has no checkpoint to go on from, nor read models to load
  if (REACTORS[c.name] === 'head') {
    await t.test(`${c.name} › reactor conformance › started, it decides what the log then asks, once`, (t) =>
      withCore(t, async ({ env, deps }) => {
        const r = env.create(deps());
        await r.start();
        await env.seed(0);
        await env.seed(1);
        const all = await settle(env, env.expected[1], 'the whole stream');
        await r.stop();
        t.equal(all.length, env.expected[1], 'one decision each');
        t.equal(new Set(all).size, all.length, 'none twice');
      }),
    );
    await t.test(`${c.name} › reactor conformance › it starts at the head: what the log held before is not its`, (t) =>
      withCore(t, async ({ env, deps }) => {
        await env.seed(0);
        const r = env.create(deps());
        await r.start();
        await env.seed(1);
        const all = await settle(env, env.expected[1] - env.expected[0], 'the second half');
        await r.stop();
        t.equal(all.length, env.expected[1] - env.expected[0], 'the second half only');
      }),
    );
  } else {
    await t.test(`${c.name} › reactor conformance › decides what the log asks, once`, (t) =>
      withCore(t, async ({ core, env, deps }) => {
        await env.seed(0);
        await env.seed(1);
        const r = env.create(deps());
        await r.start();
        const all = await settle(env, env.expected[1], 'the whole stream');
        t.equal(all.length, env.expected[1], 'one decision each');
        t.equal(new Set(all).size, all.length, 'none twice');
        await r.stop();
        await core.projector.waitFor(await core.eventStore.headPosition());
      }),
    );

    await t.test(`${c.name} › reactor conformance › restarted mid-stream, it goes on where it was`, (t) =>
      withCore(t, async ({ env, deps }) => {
        await env.seed(0);
        const first = env.create(deps());
        await first.start();
        await settle(env, env.expected[0], 'the first half');
        await first.stop();
        await env.seed(1);
        const second = env.create(deps());
        await second.start();
        const all = await settle(env, env.expected[1], 'after the restart');
        await second.stop();
        t.equal(all.length, env.expected[1], 'the second life decided the rest');
        t.equal(new Set(all).size, all.length, 'nothing twice');
      }),
    );

    await t.test(`${c.name} › reactor conformance › replayed from the start, it decides nothing again`, (t) =>
      withCore(t, async ({ core, env, deps }) => {
        await env.seed(0);
        await env.seed(1);
        const first = env.create(deps());
        await first.start();
        const before = await settle(env, env.expected[1], 'the whole stream');
        await first.stop();
        // its checkpoint back at the log's start (a lost checkpoint, an older backup of the read models)
        core.readModels.commit([], first.name, 0);
        const again = env.create(deps());
        await again.start();
        await sleep(500);
        await env.drive?.();
        const after = await settle(env, env.expected[1], 'the replay');
        await again.stop();
        t.same(after, before, 'the same decisions, none added');
      }),
    );
  }

  await t.test(`${c.name} › reactor conformance › an event that breaks its contract is skipped, not fatal`, (t) =>
    withCore(t, async ({ env, deps, foreign }) => {
      const poisoned: RecordedEvent[] = [];
      const r = env.create(deps(poisoned));
      await r.start();
      await env.seed(0);
      await env.poison(foreign);
      await env.seed(1);
      const all = await settle(env, env.expected[1], 'around the poison');
      await r.stop();
      t.equal(all.length, env.expected[1], 'every other event handled');
      t.equal(poisoned.length, 1, 'the poison reported once');
    }),
  );

  await t.test(`${c.name} › reactor conformance › two at once decide each thing once`, (t) =>
    withCore(t, async ({ env, deps }) => {
      const a = env.create(deps());
      const b = env.create(deps());
      await Promise.all([a.start(), b.start()]);
      await env.seed(0);
      await env.seed(1);
      const all = await settle(env, env.expected[1], 'with two instances');
      await Promise.all([a.stop(), b.stop()]);
      t.equal(all.length, env.expected[1], 'one decision each');
      t.equal(new Set(all).size, all.length, 'none made by both');
    }),
  );
};
