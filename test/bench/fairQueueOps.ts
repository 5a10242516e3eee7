/**
 * The fair queue's operations at 100,000 entries (docs/benchmarks.md#fair-queue-operations): the queue as shipped
 * (services/fairShare/fairQueue.ts: a heap of the flows with items, removal by marking) against the linear queue it
 * replaced (./fairQueueLinear.ts: a scan of the flows per pick, a scan and a splice per removal), doing the same
 * operations in the same order, sides alternated per round.
 *
 *   node --import tsx test/bench/fairQueueOps.ts [--entries 100000] [--ops 2000] [--rounds 3]
 *
 * Each case fills a queue with `--entries` items (not timed), then times `--ops` operations that leave it as full:
 * - backlog: one flow (an endpoint's backlog) of every entry; take one out wherever it stands, put it back at the end
 *   (what the deliverer did with each delivery it set aside);
 * - flows: one entry per flow (as many keys); pop the next, push it again to its flow;
 * - accept: one entry per flow; pop the next of the flows a filter accepts (20 refused, as the dispatcher's express
 *   class refuses the keys with work out), push it again.
 * Both sides must pop the same items in the same order: a side whose sequence differs is counted as a failure, and
 * then no ratio is printed. It asserts nothing.
 */
import { createFairQueue } from '../../services/fairShare/fairQueue.js';
import { alternate, type Figure, machineNote, medianOf, numberArg, printRatio } from './compare.js';
import { createLinearFairQueue } from './fairQueueLinear.js';

const ENTRIES = numberArg('entries', 100_000);
const OPS = numberArg('ops', 2_000);
const ROUNDS = numberArg('rounds', 3);

type Queue = Pick<ReturnType<typeof createFairQueue<number, 'c'>>, 'push' | 'pop' | 'remove'>;
type Make = () => Queue;
const makers: Record<'heap' | 'linear', Make> = {
  heap: () => createFairQueue<number, 'c'>({ classes: ['c'], minShare: 0 }),
  linear: () => createLinearFairQueue<number, 'c'>({ classes: ['c'], minShare: 0 }),
};

interface Run {
  perOpUs: number;
  /** what was popped or removed, in order, hashed: both sides must agree */
  digest: number;
}

const timed = (ops: (i: number) => number): Run => {
  let digest = 0;
  const began = process.hrtime.bigint();
  for (let i = 0; i < OPS; i++) digest = (digest * 31 + ops(i)) | 0;
  const ns = Number(process.hrtime.bigint() - began);
  return { perOpUs: ns / 1_000 / OPS, digest };
};

const cases: Record<string, (make: Make) => Run> = {
  backlog(make) {
    const q = make();
    for (let i = 0; i < ENTRIES; i++) q.push(i, { cls: 'c', flow: 'endpoint' });
    // spread through the flow, back half first: where a scan for the entry costs most
    return timed((i) => {
      const item = ENTRIES - 1 - ((i * 7919) % (ENTRIES / 2));
      if (!q.remove(item)) return -1;
      q.push(item, { cls: 'c', flow: 'endpoint' });
      return item;
    });
  },
  flows(make) {
    const q = make();
    for (let i = 0; i < ENTRIES; i++) q.push(i, { cls: 'c', flow: `k${i}` });
    return timed(() => {
      const item = q.pop() ?? -1;
      q.push(item, { cls: 'c', flow: `k${item}` });
      return item;
    });
  },
  accept(make) {
    const q = make();
    for (let i = 0; i < ENTRIES; i++) q.push(i, { cls: 'c', flow: `k${i}` });
    const refused = new Set(Array.from({ length: 20 }, (_, i) => `k${i}`));
    const accept = (flow: string) => !refused.has(flow);
    return timed(() => {
      const item = q.pop('c', accept) ?? -1;
      q.push(item, { cls: 'c', flow: `k${item}` });
      return item;
    });
  },
};

console.log(
  `# fair queue operations: ${ENTRIES.toLocaleString('en')} entries, ${OPS.toLocaleString('en')} timed operations a case, ${ROUNDS} rounds, sides alternated; ${machineNote()}`,
);
for (const [name, run] of Object.entries(cases)) {
  const results = await alternate(
    ROUNDS,
    { heap: async () => run(makers.heap), linear: async () => run(makers.linear) },
    (round, r) =>
      console.log(
        `${name} round ${round + 1}: heap ${r.heap.perOpUs.toFixed(2)} µs/op, linear ${r.linear.perOpUs.toFixed(2)} µs/op`,
      ),
  );
  const differ = results.heap.filter((h, i) => h.digest !== results.linear[i]!.digest).length;
  const figure = (rs: Run[]): Figure => medianOf(rs.map((r) => ({ value: r.perOpUs, failures: differ })));
  const heap = figure(results.heap);
  const linear = figure(results.linear);
  console.log(`${name}: median heap ${heap.value.toFixed(2)} µs/op, linear ${linear.value.toFixed(2)} µs/op`);
  printRatio(`${name}: per operation, linear / heap`, linear, heap, ['linear', 'heap']);
}
