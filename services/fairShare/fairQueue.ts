import { createIndexedHeap, type HeapMember, type IndexedHeap } from './indexedHeap.js';

/**
 * One fair queue for everything that shares a scarce capacity between keys (docs/fleet.md#lanes-and-fair-share): the
 * dispatcher's jobs, the crawler's page requests, the webhook deliverer's attempts. Pure and synchronous: the caller
 * decides when an item may go (a route free, a slot free) and asks which one goes.
 *
 * Two levels, both start-time fair queuing (SFQ, Goyal et al. 1996), with the service an item costs (a job's pages,
 * one request) as its size:
 * - **Classes** (the lanes), listed highest first. The highest class with items goes first, but every lower class
 *   with items keeps `minShare` of what is served: the weights are recomputed at each pick from the classes that
 *   have items, the highest taking what the others leave. `minShare` 0 is strict priority.
 * - **Flows** inside a class (a key, an endpoint), weighted (a tier's share). A flow with one item and a flow with
 *   ten thousand alternate by cost, not by arrival: each flow's next item starts where its last one finished in
 *   virtual time, and a flow that comes back soon after being served keeps its place behind the others (its finish
 *   tag is kept until virtual time passes it), so sending one item at a time gains nothing.
 * Inside a flow, items go first in, first out.
 *
 * Every operation is O(log n) or better however many items and flows wait (docs/fleet.md#how-the-fair-queue-stays-cheap):
 * each class keeps its flows that have items in a heap on their start tags, a pick with `accept` looks only at the
 * flows it refuses (best first through that heap), and `remove` only marks its entry, which the flow's head steps
 * over later. Forgetting idle flows is amortised: a sweep runs once the flows known have doubled since the last one.
 */
export interface FairPlace<C extends string> {
  cls: C;
  flow: string;
  /** the flow's weight, > 0 (default 1); the latest item's weight is the flow's */
  weight?: number;
  /** what serving the item costs, > 0 (default 1) */
  cost?: number;
}

export interface FairQueueOptions<C extends string> {
  /** the classes, highest first */
  classes: readonly C[];
  /** the share of service every lower class with items keeps, 0 ≤ minShare ≤ 1 / classes (0: strict priority) */
  minShare: number;
}

export interface FlowSummary {
  flow: string;
  items: number;
  /** the items' summed cost */
  cost: number;
}

export interface FairQueue<T, C extends string> {
  push(item: T, place: FairPlace<C>): void;
  /**
   * the item `pop()` would return now; with `cls`, the next of that class alone (its flows in their fair order), and
   * with `accept`, of the flows it accepts
   */
  peek(cls?: C, accept?: (flow: string) => boolean): T | undefined;
  pop(cls?: C, accept?: (flow: string) => boolean): T | undefined;
  /** the next item of one flow, out of turn (charged to the flow as if served in turn) */
  popFlow(cls: C, flow: string): T | undefined;
  /** takes an item out wherever it waits; false when it is not queued */
  remove(item: T): boolean;
  has(item: T): boolean;
  readonly size: number;
  sizeOf(cls: C): number;
  /** the flows of a class that have items, most cost first */
  flows(cls: C): FlowSummary[];
  /**
   * entries and flows looked at by every operation so far: the queue's work counted in steps, not in time, so what it
   * costs per operation can be read on any machine
   */
  readonly steps: number;
}

interface Entry<T> {
  item: T;
  cost: number;
  /** false once removed: the flow's head steps over it */
  live: boolean;
}

interface Flow<T> extends HeapMember {
  id: string;
  weight: number;
  items: Entry<T>[];
  head: number;
  /** live items waiting (the array also holds removed entries past the head) */
  count: number;
  /** removed entries still in the array past the head */
  dead: number;
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
  /** flows with items, least start tag first */
  active: IndexedHeap<Flow<T>>;
  virtual: number;
  items: number;
  finish: number;
  start: number;
  seq: number;
  /** the count of flows known at which idle ones are next swept */
  pruneAt: number;
}

/** below this many flows known, idle ones are not swept */
const PRUNE_MIN = 64;

const earlier = <T>(a: Flow<T>, b: Flow<T>) => a.start < b.start || (a.start === b.start && a.seq < b.seq);

export const createFairQueue = <T, C extends string>(options: FairQueueOptions<C>): FairQueue<T, C> => {
  const { classes: names } = options;
  if (names.length === 0) throw new RangeError('a fair queue needs at least one class');
  if (!(options.minShare >= 0 && options.minShare * names.length <= 1 + 1e-9)) {
    throw new RangeError(`minShare must be between 0 and ${1 / names.length}, got ${options.minShare}`);
  }
  let steps = 0;
  const step = () => {
    steps += 1;
  };
  const classes = names.map(
    (id, rank): Class<T, C> => ({
      id,
      rank,
      flows: new Map(),
      active: createIndexedHeap<Flow<T>>(earlier, step),
      virtual: 0,
      items: 0,
      finish: 0,
      start: 0,
      seq: 0,
      pruneAt: PRUNE_MIN,
    }),
  );
  const byName = new Map<C, Class<T, C>>(classes.map((c) => [c.id, c]));
  /** classes with items */
  const busy = new Set<Class<T, C>>();
  let classVirtual = 0;
  let seq = 0;
  let size = 0;
  const where = new Map<T, { cls: Class<T, C>; flow: Flow<T>; entry: Entry<T> }>();

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

  const pickFlow = (c: Class<T, C>, accept?: (flow: string) => boolean): Flow<T> | undefined =>
    accept ? c.active.least((f) => accept(f.id)) : c.active.peek();

  /**
   * forgets idle flows whose finish tag virtual time has passed (they would start at virtual time anyway), once the
   * flows known have doubled since the last sweep, when a flow is made: each sweep is paid for by the flows made
   * since the last one
   */
  const prune = (c: Class<T, C>) => {
    if (c.flows.size < c.pruneAt) return;
    for (const [id, f] of c.flows) {
      step();
      if (f.count === 0 && f.finish <= c.virtual) c.flows.delete(id);
    }
    c.pruneAt = Math.max(PRUNE_MIN, c.active.size * 2 + PRUNE_MIN, c.flows.size * 2);
  };

  /** moves the flow's head past removed entries, and drops the array's served part once it is most of it */
  const settleHead = (f: Flow<T>) => {
    while (f.head < f.items.length && !f.items[f.head]!.live) {
      step();
      f.items[f.head] = undefined as unknown as Entry<T>;
      f.head += 1;
      f.dead -= 1;
    }
    if (f.head > 64 && f.head * 2 > f.items.length) {
      f.items = f.items.slice(f.head);
      f.head = 0;
    }
  };

  const push = (item: T, place: FairPlace<C>) => {
    if (where.has(item)) throw new Error('item already queued');
    const weight = place.weight ?? 1;
    const cost = place.cost ?? 1;
    if (!(weight > 0) || !(cost > 0)) throw new RangeError('weight and cost must be positive');
    const c = classOf(place.cls);
    let f = c.flows.get(place.flow);
    if (!f) {
      prune(c);
      f = {
        id: place.flow,
        weight,
        items: [],
        head: 0,
        count: 0,
        dead: 0,
        cost: 0,
        finish: 0,
        start: 0,
        seq: 0,
        heapAt: -1,
      };
      c.flows.set(place.flow, f);
    }
    f.weight = weight;
    const entry: Entry<T> = { item, cost, live: true };
    f.items.push(entry);
    f.count += 1;
    f.cost += cost;
    if (f.count === 1) {
      f.start = Math.max(c.virtual, f.finish);
      f.seq = ++seq;
      c.active.add(f);
    }
    if (c.items === 0) {
      c.start = Math.max(classVirtual, c.finish);
      c.seq = ++seq;
      busy.add(c);
    }
    c.items += 1;
    size += 1;
    where.set(item, { cls: c, flow: f, entry });
  };

  /** takes the flow's head out and charges the service to the flow and its class */
  const serve = (c: Class<T, C>, f: Flow<T>, inTurn: boolean): T => {
    const entry = f.items[f.head]!;
    f.items[f.head] = undefined as unknown as Entry<T>;
    f.head += 1;
    step();
    settleHead(f);
    f.count -= 1;
    f.cost -= entry.cost;
    const classWeight = weightOf(c);
    // out of turn (popFlow) the flow is charged from where it stands, and virtual time does not move
    const flowStart = inTurn ? f.start : Math.max(c.virtual, f.finish);
    if (inTurn) c.virtual = Math.max(c.virtual, flowStart);
    f.finish = flowStart + entry.cost / f.weight;
    if (f.count > 0) {
      f.start = Math.max(c.virtual, f.finish);
      f.seq = ++seq;
      c.active.update(f);
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
      return f && f.count > 0 ? serve(c, f, false) : undefined;
    },
    remove(item) {
      const at = where.get(item);
      if (!at) return false;
      const { cls: c, flow: f, entry } = at;
      step();
      entry.live = false;
      f.count -= 1;
      f.cost -= entry.cost;
      if (f.count === 0) {
        // nothing live is left: the removed entries go with the array
        c.active.delete(f);
        f.items = [];
        f.head = 0;
        f.dead = 0;
      } else {
        f.dead += 1;
        settleHead(f);
        if (f.dead > 64 && f.dead * 2 > f.items.length - f.head) {
          steps += f.items.length - f.head;
          f.items = f.items.slice(f.head).filter((e) => e.live);
          f.head = 0;
          f.dead = 0;
        }
      }
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
    get steps() {
      return steps;
    },
    sizeOf: (cls) => classOf(cls).items,
    flows(cls) {
      return [...classOf(cls).active.values()]
        .map((f) => ({ flow: f.id, items: f.count, cost: f.cost }))
        .sort((a, b) => b.cost - a.cost || a.flow.localeCompare(b.flow));
    },
  };
};
