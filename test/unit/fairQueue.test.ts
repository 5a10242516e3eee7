import fc from 'fast-check';
import t from 'tap';
import { createFairQueue } from '../../services/fairShare/fairQueue.js';
import { createLinearFairQueue } from '../bench/fairQueueLinear.js';

type Lane = 'live' | 'scheduled' | 'bulk';
const LANES: Lane[] = ['live', 'scheduled', 'bulk'];
const queue = (minShare = 0.1) => createFairQueue<string, Lane>({ classes: LANES, minShare });

/** pops everything, in order */
const drain = (q: ReturnType<typeof queue>) => {
  const out: string[] = [];
  for (let x = q.pop(); x !== undefined; x = q.pop()) out.push(x);
  return out;
};

t.test('FairQueue › between flows of one class', async (t) => {
  t.test('one item behind ten thousand of another flow goes at once', async (t) => {
    const q = queue();
    for (let i = 0; i < 10_000; i++) q.push(`a${i}`, { cls: 'bulk', flow: 'A' });
    q.push('b0', { cls: 'bulk', flow: 'B' });
    const first = [q.pop(), q.pop()];
    t.ok(first.includes('b0'), `B's item among the first two served (${first.join(', ')})`);
  });

  t.test('two backlogged flows alternate by cost, not by item', async (t) => {
    const q = queue();
    for (let i = 0; i < 30; i++) q.push(`a${i}`, { cls: 'live', flow: 'A', cost: 10 });
    for (let i = 0; i < 300; i++) q.push(`b${i}`, { cls: 'live', flow: 'B', cost: 1 });
    const served = drain(q).slice(0, 110);
    const aItems = served.filter((x) => x.startsWith('a')).length;
    const bItems = served.length - aItems;
    // equal cost each: ten of B's one-page items per item of A's ten pages
    t.ok(Math.abs(aItems * 10 - bItems) <= 11, `cost served: A ${aItems * 10}, B ${bItems}`);
  });

  t.test("a flow's weight is its share", async (t) => {
    const q = queue();
    for (let i = 0; i < 300; i++) q.push(`a${i}`, { cls: 'live', flow: 'A', weight: 2 });
    for (let i = 0; i < 300; i++) q.push(`b${i}`, { cls: 'live', flow: 'B', weight: 1 });
    const served = drain(q).slice(0, 300);
    const a = served.filter((x) => x.startsWith('a')).length;
    t.ok(a >= 198 && a <= 202, `A (weight 2) got ${a} of 300`);
  });

  t.test('sending one item at a time gains nothing over a backlog', async (t) => {
    const q = queue();
    for (let i = 0; i < 100; i++) q.push(`a${i}`, { cls: 'live', flow: 'A' });
    const served: string[] = [];
    // B pushes its next item only once its last one was served, every time
    let b = 0;
    q.push(`b${b++}`, { cls: 'live', flow: 'B' });
    for (let i = 0; i < 60; i++) {
      const x = q.pop()!;
      served.push(x);
      if (x.startsWith('b')) q.push(`b${b++}`, { cls: 'live', flow: 'B' });
    }
    const bServed = served.filter((x) => x.startsWith('b')).length;
    t.ok(bServed >= 29 && bServed <= 31, `B served ${bServed} of 60`);
  });

  t.test('items of one flow go first in, first out', async (t) => {
    const q = queue();
    for (let i = 0; i < 5; i++) q.push(`a${i}`, { cls: 'live', flow: 'A' });
    t.same(drain(q), ['a0', 'a1', 'a2', 'a3', 'a4']);
  });
});

t.test('FairQueue › between classes', async (t) => {
  t.test('a higher class goes first, a lower one keeps its minimum share', async (t) => {
    const q = queue(0.1);
    for (let i = 0; i < 1000; i++) q.push(`l${i}`, { cls: 'live', flow: 'A' });
    for (let i = 0; i < 1000; i++) q.push(`b${i}`, { cls: 'bulk', flow: 'B' });
    const served = drain(q).slice(0, 500);
    const bulk = served.filter((x) => x.startsWith('b')).length;
    t.ok(bulk >= 48 && bulk <= 52, `bulk got ${bulk} of 500 (10 %)`);
    t.equal(served[0], 'l0', 'the live lane goes first');
  });

  t.test('each lower class with items keeps its share', async (t) => {
    const q = queue(0.1);
    for (const lane of LANES) for (let i = 0; i < 1000; i++) q.push(`${lane}${i}`, { cls: lane, flow: 'K' });
    const served = drain(q).slice(0, 1000);
    const count = (lane: Lane) => served.filter((x) => x.startsWith(lane)).length;
    t.ok(Math.abs(count('live') - 800) <= 3, `live ${count('live')}`);
    t.ok(Math.abs(count('scheduled') - 100) <= 3, `scheduled ${count('scheduled')}`);
    t.ok(Math.abs(count('bulk') - 100) <= 3, `bulk ${count('bulk')}`);
  });

  t.test('a class alone takes everything', async (t) => {
    const q = queue(0.1);
    for (let i = 0; i < 10; i++) q.push(`b${i}`, { cls: 'bulk', flow: 'B' });
    t.equal(drain(q).length, 10);
  });

  t.test('minShare 0 is strict priority', async (t) => {
    const q = queue(0);
    for (let i = 0; i < 5; i++) q.push(`b${i}`, { cls: 'bulk', flow: 'B' });
    for (let i = 0; i < 5; i++) q.push(`l${i}`, { cls: 'live', flow: 'A' });
    t.same(drain(q), ['l0', 'l1', 'l2', 'l3', 'l4', 'b0', 'b1', 'b2', 'b3', 'b4']);
  });

  t.test('an impossible minimum share is refused', async (t) => {
    t.throws(() => queue(0.5), RangeError);
    t.throws(() => queue(-0.1), RangeError);
  });
});

t.test('FairQueue › bookkeeping', async (t) => {
  const q = queue();
  q.push('a0', { cls: 'live', flow: 'A', cost: 10 });
  q.push('a1', { cls: 'live', flow: 'A', cost: 10 });
  q.push('b0', { cls: 'bulk', flow: 'B' });
  t.equal(q.size, 3);
  t.equal(q.sizeOf('live'), 2);
  t.same(q.flows('live'), [{ flow: 'A', items: 2, cost: 20 }]);
  t.equal(q.peek(), q.peek(), 'peek does not move');
  t.ok(q.remove('a0'));
  t.notOk(q.remove('a0'), 'removed once');
  t.notOk(q.has('a0'));
  t.equal(q.popFlow('bulk', 'B'), 'b0', 'one flow served out of turn');
  t.equal(q.popFlow('bulk', 'B'), undefined);
  t.equal(q.pop(), 'a1');
  t.equal(q.size, 0);
  t.equal(q.pop(), undefined);
  t.throws(() => q.push('x', { cls: 'nope' as Lane, flow: 'A' }), RangeError);
  q.push('y', { cls: 'live', flow: 'A' });
  t.throws(() => q.push('y', { cls: 'live', flow: 'A' }), /already queued/);
});

t.test('FairQueue › every item pushed is served once, in order within its flow, peek agreeing with pop', async (t) => {
  const op = fc.oneof(
    fc.record({
      push: fc.constant(true),
      cls: fc.constantFrom(...LANES),
      flow: fc.constantFrom('A', 'B', 'C', 'D'),
      weight: fc.constantFrom(1, 2, 4),
      cost: fc.constantFrom(1, 3, 10),
    }),
    fc.record({ pop: fc.constant(true) }),
    fc.record({ removeAt: fc.nat(50) }),
  );
  t.doesNotThrow(() =>
    fc.assert(
      fc.property(fc.array(op, { maxLength: 200 }), fc.constantFrom(0, 0.1, 0.2), (ops, minShare) => {
        const q = queue(minShare);
        const queued: string[] = [];
        const flowOf = new Map<string, string>();
        const seen: string[] = [];
        let n = 0;
        for (const o of ops) {
          if ('push' in o) {
            const id = `x${n++}`;
            q.push(id, o);
            queued.push(id);
            flowOf.set(id, `${o.cls}/${o.flow}`);
          } else if ('pop' in o) {
            const peeked = q.peek();
            const x = q.pop();
            if (peeked !== x) throw new Error(`peek ${peeked} but pop ${x}`);
            if (x !== undefined) seen.push(x);
          } else if (queued.length > 0) {
            const id = queued[o.removeAt % queued.length]!;
            if (q.remove(id)) flowOf.delete(id);
          }
        }
        for (let x = q.pop(); x !== undefined; x = q.pop()) seen.push(x);
        if (new Set(seen).size !== seen.length) throw new Error('an item served twice');
        if (seen.length !== flowOf.size) throw new Error(`served ${seen.length} of ${flowOf.size}`);
        const last = new Map<string, number>();
        for (const x of seen) {
          const f = flowOf.get(x)!;
          const k = Number(x.slice(1));
          if ((last.get(f) ?? -1) > k) throw new Error(`flow ${f} out of order at ${x}`);
          last.set(f, k);
        }
        if (q.size !== 0) throw new Error('not empty');
      }),
    ),
  );
});

t.test('FairQueue › one class at a time, and only the flows asked for', async (t) => {
  const q = queue();
  q.push('l0', { cls: 'live', flow: 'A' });
  q.push('b0', { cls: 'bulk', flow: 'A' });
  q.push('b1', { cls: 'bulk', flow: 'B' });
  t.equal(q.peek('bulk'), 'b0', 'the next of the bulk class, though live would go first overall');
  t.equal(
    q.pop('bulk', (flow) => flow === 'B'),
    'b1',
    'the next of the flows accepted',
  );
  t.equal(
    q.pop('bulk', (flow) => flow === 'C'),
    undefined,
    'none accepted: nothing',
  );
  t.equal(q.pop(), 'l0');
  t.equal(q.pop(), 'b0');
});

t.test('FairQueue › answers as the linear queue it replaced, operation by operation', async (t) => {
  const op = fc.oneof(
    fc.record({
      push: fc.constant(true),
      cls: fc.constantFrom(...LANES),
      flow: fc.constantFrom('A', 'B', 'C', 'D', 'E'),
      weight: fc.constantFrom(1, 2, 4),
      cost: fc.constantFrom(1, 3, 10),
    }),
    fc.record({ pop: fc.constant(true), cls: fc.option(fc.constantFrom(...LANES)), refuse: fc.option(fc.nat(4)) }),
    fc.record({ popFlow: fc.constantFrom(...LANES), flow: fc.constantFrom('A', 'B', 'C', 'D', 'E') }),
    fc.record({ removeAt: fc.nat(300) }),
  );
  t.doesNotThrow(() =>
    fc.assert(
      fc.property(fc.array(op, { maxLength: 300 }), fc.constantFrom(0, 0.1, 0.2), (ops, minShare) => {
        const q = queue(minShare);
        const old = createLinearFairQueue<string, Lane>({ classes: LANES, minShare });
        const pushed: string[] = [];
        let n = 0;
        const same = (what: string, a: unknown, b: unknown) => {
          if (a !== b) throw new Error(`${what}: ${String(a)} where the linear queue gives ${String(b)}`);
        };
        for (const o of ops) {
          if ('push' in o) {
            const id = `x${n++}`;
            q.push(id, o);
            old.push(id, o);
            pushed.push(id);
          } else if ('pop' in o) {
            const flows = ['A', 'B', 'C', 'D', 'E'];
            const accept = o.refuse === null ? undefined : (f: string) => f !== flows[o.refuse!];
            const cls = o.cls ?? undefined;
            same('peek', q.peek(cls, accept), old.peek(cls, accept));
            same('pop', q.pop(cls, accept), old.pop(cls, accept));
          } else if ('popFlow' in o) {
            same('popFlow', q.popFlow(o.popFlow, o.flow), old.popFlow(o.popFlow, o.flow));
          } else if (pushed.length > 0) {
            const id = pushed[o.removeAt % pushed.length]!;
            same('remove', q.remove(id), old.remove(id));
          }
          same('size', q.size, old.size);
          for (const lane of LANES) {
            same('flows', JSON.stringify(q.flows(lane)), JSON.stringify(old.flows(lane)));
          }
        }
        for (let x = old.pop(); x !== undefined; x = old.pop()) same('drain', q.pop(), x);
        same('empty', q.size, 0);
      }),
    ),
  );
});

t.test('FairQueue › the work of an operation does not grow with what waits (counted in steps, not time)', async (t) => {
  const stepsPer = (q: ReturnType<typeof queue>, ops: number, run: () => void) => {
    const before = q.steps;
    run();
    return (q.steps - before) / ops;
  };

  t.test('removing any of 100,000 items of one flow looks at a few entries, not the flow', async (t) => {
    const q = queue();
    const n = 100_000;
    for (let i = 0; i < n; i++) q.push(`a${i}`, { cls: 'bulk', flow: 'A' });
    // from the back, then every other one from the front: where a scan for the entry costs most
    const back = stepsPer(q, n / 4, () => {
      for (let i = n - 1; i >= (3 * n) / 4; i--) q.remove(`a${i}`);
    });
    const spread = stepsPer(q, n / 4, () => {
      for (let i = 0; i < n / 2; i += 2) q.remove(`a${i}`);
    });
    t.ok(back <= 4, `${back.toFixed(2)} steps a remove from the back`);
    t.ok(spread <= 4, `${spread.toFixed(2)} steps a remove spread through the flow`);
    const rest = stepsPer(q, q.size, () => {
      for (let x = q.pop(); x !== undefined; x = q.pop());
    });
    t.ok(rest <= 6, `${rest.toFixed(2)} steps a pop over the removed entries`);
    t.equal(q.size, 0);
  });

  t.test('a pop among 100,000 flows looks at O(log n) of them', async (t) => {
    const perPop = (flows: number) => {
      const q = queue();
      for (let i = 0; i < flows; i++) for (let k = 0; k < 3; k++) q.push(`f${i}-${k}`, { cls: 'live', flow: `f${i}` });
      return stepsPer(q, flows * 3, () => {
        for (let x = q.pop(); x !== undefined; x = q.pop());
      });
    };
    const small = perPop(100);
    const large = perPop(100_000);
    t.ok(large <= 3 * Math.log2(100_000), `${large.toFixed(1)} steps a pop among 100,000 flows`);
    t.ok(
      large <= small * 4,
      `${small.toFixed(1)} steps among 100 flows, ${large.toFixed(1)} among 100,000 (1,000× more)`,
    );
  });

  t.test('a pop that refuses some flows looks at those it refuses, not at every flow', async (t) => {
    const q = queue();
    for (let i = 0; i < 100_000; i++) q.push(`f${i}`, { cls: 'live', flow: `f${i}` });
    // the 20 flows first in line are refused (keys with work out already, as the dispatcher's express class asks)
    const refused = new Set(Array.from({ length: 20 }, (_, i) => `f${i}`));
    const accept = (flow: string) => !refused.has(flow);
    const per = stepsPer(q, 1_000, () => {
      for (let i = 0; i < 1_000; i++) q.pop('live', accept);
    });
    t.ok(per <= 20 * 4 + 3 * Math.log2(100_000), `${per.toFixed(1)} steps a pop refusing 20 of 100,000 flows`);
    t.equal(q.peek('live', accept), 'f1020', 'the pops went in order past the refused flows');
  });
});
