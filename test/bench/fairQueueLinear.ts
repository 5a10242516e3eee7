/**
 * The fair queue as it was before its operations were made O(log n) (docs/benchmarks.md#fair-queue-operations): the
 * same start-time fair queuing, but every pick scans the class's flows with items, and `remove` finds its entry with
 * a scan and splices it out. Kept here only as the baseline `fairQueueOps.ts` measures against and
 * `test/unit/fairQueue.test.ts` checks the production queue's answers against, operation by operation.
 */
import type { FairPlace, FairQueueOptions, FlowSummary } from '../../services/fairShare/fairQueue.js';

export interface LinearFairQueue<T, C extends string> {
  push(item: T, place: FairPlace<C>): void;
  peek(cls?: C, accept?: (flow: string) => boolean): T | undefined;
  pop(cls?: C, accept?: (flow: string) => boolean): T | undefined;
  popFlow(cls: C, flow: string): T | undefined;
  remove(item: T): boolean;
  has(item: T): boolean;
  readonly size: number;
  sizeOf(cls: C): number;
  flows(cls: C): FlowSummary[];
}

interface Entry<T> {
  item: T;
  cost: number;
}

interface Flow<T> {
  id: string;
  weight: number;
  items: Entry<T>[];
  head: number;
  /** summed cost of the items waiting */
  cost: number;
  /** finish tag of the flow's last service */
  finish: number;
  /** start tag of its head item (meaningful while it has items) */
  start: number;
  /** when its start tag was set: ties go first come, first served */
  seq: number;
}

interface Class<T, C extends string> {
  id: C;
  rank: number;
  flows: Map<string, Flow<T>>;
  /** flows with items */
  active: Set<Flow<T>>;
  virtual: number;
  items: number;
  finish: number;
  start: number;
  seq: number;
}

const waiting = <T>(f: Flow<T>) => f.items.length - f.head;

export const createLinearFairQueue = <T, C extends string>(options: FairQueueOptions<C>): LinearFairQueue<T, C> => {
  const { classes: names } = options;
  if (names.length === 0) throw new RangeError('a fair queue needs at least one class');
  if (!(options.minShare >= 0 && options.minShare * names.length <= 1 + 1e-9)) {
    throw new RangeError(`minShare must be between 0 and ${1 / names.length}, got ${options.minShare}`);
  }
  const classes = names.map(
    (id, rank): Class<T, C> => ({
      id,
      rank,
      flows: new Map(),
      active: new Set(),
      virtual: 0,
      items: 0,
      finish: 0,
      start: 0,
      seq: 0,
    }),
  );
  const byName = new Map<C, Class<T, C>>(classes.map((c) => [c.id, c]));
  /** classes with items */
  const busy = new Set<Class<T, C>>();
  let classVirtual = 0;
  let seq = 0;
  let size = 0;
  const where = new Map<T, { cls: Class<T, C>; flow: Flow<T> }>();

  const classOf = (name: C) => {
    const c = byName.get(name);
    if (!c) throw new RangeError(`unknown class "${name}" (classes: ${names.join(', ')})`);
    return c;
  };

  /** the class's weight now, given the classes that have items */
  const weightOf = (c: Class<T, C>) => {
    let higher = true;
    let others = 0;
    for (const b of busy) {
      if (b === c) continue;
      others += 1;
      if (b.rank < c.rank) higher = false;
    }
    // the highest class with items takes what the lower ones' guaranteed shares leave
    return higher ? Math.max(1e-9, 1 - options.minShare * others) : options.minShare;
  };

  const pickClass = (): Class<T, C> | undefined => {
    let best: Class<T, C> | undefined;
    if (options.minShare === 0) {
      for (const c of busy) if (!best || c.rank < best.rank) best = c;
      return best;
    }
    for (const c of busy) if (!best || c.start < best.start || (c.start === best.start && c.seq < best.seq)) best = c;
    return best;
  };

  const pickFlow = (c: Class<T, C>, accept?: (flow: string) => boolean): Flow<T> | undefined => {
    let best: Flow<T> | undefined;
    for (const f of c.active) {
      if (accept && !accept(f.id)) continue;
      if (!best || f.start < best.start || (f.start === best.start && f.seq < best.seq)) best = f;
    }
    return best;
  };

  /** forgets idle flows whose finish tag virtual time has passed: they would start at virtual time anyway */
  const prune = (c: Class<T, C>) => {
    if (c.flows.size <= c.active.size * 2 + 64) return;
    for (const [id, f] of c.flows) if (waiting(f) === 0 && f.finish <= c.virtual) c.flows.delete(id);
  };

  const push = (item: T, place: FairPlace<C>) => {
    if (where.has(item)) throw new Error('item already queued');
    const weight = place.weight ?? 1;
    const cost = place.cost ?? 1;
    if (!(weight > 0) || !(cost > 0)) throw new RangeError('weight and cost must be positive');
    const c = classOf(place.cls);
    let f = c.flows.get(place.flow);
    if (!f) {
      f = { id: place.flow, weight, items: [], head: 0, cost: 0, finish: 0, start: 0, seq: 0 };
      c.flows.set(place.flow, f);
    }
    f.weight = weight;
    if (waiting(f) === 0) {
      f.start = Math.max(c.virtual, f.finish);
      f.seq = ++seq;
      c.active.add(f);
    }
    f.items.push({ item, cost });
    f.cost += cost;
    if (c.items === 0) {
      c.start = Math.max(classVirtual, c.finish);
      c.seq = ++seq;
      busy.add(c);
    }
    c.items += 1;
    size += 1;
    where.set(item, { cls: c, flow: f });
  };

  /** takes the flow's head out and charges the service to the flow and its class */
  const serve = (c: Class<T, C>, f: Flow<T>, inTurn: boolean): T => {
    const entry = f.items[f.head]!;
    f.items[f.head] = undefined as unknown as Entry<T>;
    f.head += 1;
    if (f.head > 64 && f.head * 2 > f.items.length) {
      f.items = f.items.slice(f.head);
      f.head = 0;
    }
    f.cost -= entry.cost;
    const classWeight = weightOf(c);
    // out of turn (popFlow) the flow is charged from where it stands, and virtual time does not move
    const flowStart = inTurn ? f.start : Math.max(c.virtual, f.finish);
    if (inTurn) c.virtual = Math.max(c.virtual, flowStart);
    f.finish = flowStart + entry.cost / f.weight;
    if (waiting(f) > 0) {
      f.start = Math.max(c.virtual, f.finish);
      f.seq = ++seq;
    } else c.active.delete(f);
    const classStart = inTurn ? c.start : Math.max(classVirtual, c.finish);
    if (inTurn) classVirtual = Math.max(classVirtual, classStart);
    c.finish = classStart + (options.minShare === 0 ? 0 : entry.cost / classWeight);
    c.items -= 1;
    if (c.items > 0) {
      c.start = Math.max(classVirtual, c.finish);
      c.seq = ++seq;
    } else busy.delete(c);
    size -= 1;
    where.delete(entry.item);
    prune(c);
    return entry.item;
  };

  const next = (cls?: C, accept?: (flow: string) => boolean) => {
    const c = cls === undefined ? pickClass() : classOf(cls);
    const f = c && pickFlow(c, accept);
    return c && f ? { c, f } : undefined;
  };

  return {
    push,
    peek(cls, accept) {
      const n = next(cls, accept);
      return n ? n.f.items[n.f.head]!.item : undefined;
    },
    pop(cls, accept) {
      const n = next(cls, accept);
      return n ? serve(n.c, n.f, true) : undefined;
    },
    popFlow(cls, flow) {
      const c = classOf(cls);
      const f = c.flows.get(flow);
      return f && waiting(f) > 0 ? serve(c, f, false) : undefined;
    },
    remove(item) {
      const at = where.get(item);
      if (!at) return false;
      const { cls: c, flow: f } = at;
      const i = f.items.findIndex((e, k) => k >= f.head && e?.item === item);
      const [entry] = f.items.splice(i, 1);
      f.cost -= entry!.cost;
      if (waiting(f) === 0) c.active.delete(f);
      c.items -= 1;
      if (c.items === 0) busy.delete(c);
      size -= 1;
      where.delete(item);
      return true;
    },
    has: (item) => where.has(item),
    get size() {
      return size;
    },
    sizeOf: (cls) => classOf(cls).items,
    flows(cls) {
      return [...classOf(cls).active]
        .map((f) => ({ flow: f.id, items: waiting(f), cost: f.cost }))
        .sort((a, b) => b.cost - a.cost || a.flow.localeCompare(b.flow));
    },
  };
};
