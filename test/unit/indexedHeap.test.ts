import fc from 'fast-check';
import t from 'tap';
import { createIndexedHeap, type HeapMember } from '../../services/fairShare/indexedHeap.js';

/**
 * The heap the fair queue keeps its flows in (docs/fleet.md#how-the-fair-queue-stays-cheap): whatever the order of
 * adds, key changes and removals, it hands out the least member, and the least one a filter accepts, as a sorted list
 * of the same members would.
 */
interface Flow extends HeapMember {
  id: number;
  key: number;
}
const less = (a: Flow, b: Flow) => a.key < b.key || (a.key === b.key && a.id < b.id);
const leastOf = (xs: Flow[]) => [...xs].sort((a, b) => (less(a, b) ? -1 : 1))[0];

type Op =
  | { op: 'add'; key: number }
  | { op: 'delete'; pick: number }
  | { op: 'update'; pick: number; key: number }
  | { op: 'least'; mod: number };

const ops = fc.array(
  fc.oneof(
    fc.record({ op: fc.constant('add' as const), key: fc.integer({ min: 0, max: 50 }) }),
    fc.record({ op: fc.constant('delete' as const), pick: fc.nat() }),
    fc.record({ op: fc.constant('update' as const), pick: fc.nat(), key: fc.integer({ min: 0, max: 50 }) }),
    fc.record({ op: fc.constant('least' as const), mod: fc.integer({ min: 2, max: 5 }) }),
  ),
  { maxLength: 200 },
);

t.test('indexed heap › behaves as a sorted list of its members', async (t) => {
  const problems: string[] = [];
  fc.assert(
    fc.property(ops, (script: Op[]) => {
      const heap = createIndexedHeap<Flow>(less);
      const model: Flow[] = [];
      let next = 0;
      for (const s of script) {
        if (s.op === 'add') {
          const f = { id: next++, key: s.key, heapAt: -1 };
          heap.add(f);
          model.push(f);
        } else if (s.op === 'delete' && model.length > 0) {
          const [f] = model.splice(s.pick % model.length, 1);
          heap.delete(f);
          if (f.heapAt !== -1) return false;
        } else if (s.op === 'update' && model.length > 0) {
          const f = model[s.pick % model.length];
          f.key = s.key;
          heap.update(f);
        } else if (s.op === 'least') {
          const accept = (f: Flow) => f.id % s.mod === 0;
          if (heap.least(accept) !== leastOf(model.filter(accept))) return false;
        }
        if (heap.size !== model.length || heap.peek() !== leastOf(model)) return false;
      }
      return [...heap.values()].length === model.length;
    }),
    { numRuns: 300, reporter: (r) => r.failed && problems.push(fc.defaultReportMessage(r) ?? 'failed') },
  );
  t.same(problems, [], 'peek, least and size agree with the sorted list after every step of 300 random scripts');
});

t.test('indexed heap › a member not in the heap', async (t) => {
  const heap = createIndexedHeap<Flow>(less);
  const a = { id: 1, key: 5, heapAt: -1 };
  const b = { id: 2, key: 3, heapAt: -1 };
  heap.add(a);
  heap.delete(b);
  t.equal(heap.size, 1, 'deleting a stranger changes nothing');
  t.equal(heap.peek(), a, 'and the member stays');
  heap.delete(a);
  t.equal(heap.peek(), undefined, 'an empty heap has no least member');
  t.equal(
    heap.least(() => true),
    undefined,
    'nor one a filter accepts',
  );
});

t.test('indexed heap › a filter looks only at the members it refused and their children', async (t) => {
  let steps = 0;
  const heap = createIndexedHeap<Flow>(less, () => {
    steps++;
  });
  for (let i = 0; i < 1000; i++) heap.add({ id: i, key: i, heapAt: -1 });
  steps = 0;
  t.equal(heap.least((f) => f.id >= 3)?.id, 3, 'the least member the filter takes');
  t.ok(steps < 40, `in ${steps} steps of a heap of 1,000`);
});
