/**
 * A binary min-heap whose members know their place in it, so a member whose key moved is sifted from where it is and
 * one that leaves is taken out from where it is, each in O(log n) (docs/fleet.md#how-the-fair-queue-stays-cheap).
 * The fair queue keeps the flows that have items in one per class. Hand-written: the heap packages at hand neither
 * update nor remove a member in place, nor find the least member a filter accepts without taking members out.
 */
export interface HeapMember {
  /** the member's index in its heap; -1 when it is in none */
  heapAt: number;
}

export interface IndexedHeap<T extends HeapMember> {
  readonly size: number;
  peek(): T | undefined;
  add(x: T): void;
  /** takes `x` out wherever it stands (nothing when it is not in the heap) */
  delete(x: T): void;
  /** `x`'s key changed: restores the order around it */
  update(x: T): void;
  /**
   * The least member `accept` takes, found best first from the root: a member is looked at only when its parent was
   * looked at and refused, so the cost is O(k log k) for the k members refused, whatever the heap holds.
   */
  least(accept: (x: T) => boolean): T | undefined;
  values(): IterableIterator<T>;
}

export const createIndexedHeap = <T extends HeapMember>(
  less: (a: T, b: T) => boolean,
  /** counts each member looked at (the fair queue's `steps`) */
  step: () => void = () => {},
): IndexedHeap<T> => {
  const a: T[] = [];
  const place = (x: T, i: number) => {
    a[i] = x;
    x.heapAt = i;
  };
  const up = (i: number) => {
    const x = a[i]!;
    while (i > 0) {
      const p = (i - 1) >> 1;
      step();
      if (!less(x, a[p]!)) break;
      place(a[p]!, i);
      i = p;
    }
    place(x, i);
  };
  const down = (i: number) => {
    const x = a[i]!;
    const n = a.length;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      step();
      const c = r < n && less(a[r]!, a[l]!) ? r : l;
      if (!less(a[c]!, x)) break;
      place(a[c]!, i);
      i = c;
    }
    place(x, i);
  };
  const fix = (i: number) => {
    if (i > 0 && less(a[i]!, a[(i - 1) >> 1]!)) up(i);
    else down(i);
  };
  return {
    get size() {
      return a.length;
    },
    peek: () => a[0],
    add(x) {
      a.push(x);
      x.heapAt = a.length - 1;
      up(x.heapAt);
    },
    delete(x) {
      const i = x.heapAt;
      if (i < 0 || a[i] !== x) return;
      x.heapAt = -1;
      const last = a.pop()!;
      if (i === a.length) return;
      place(last, i);
      fix(i);
    },
    update(x) {
      if (x.heapAt >= 0 && a[x.heapAt] === x) fix(x.heapAt);
    },
    least(accept) {
      if (a.length === 0) return undefined;
      // a small heap of the indices to look at next, ordered as the members they hold
      const frontier: number[] = [0];
      const lessAt = (i: number, j: number) => less(a[i]!, a[j]!);
      while (frontier.length > 0) {
        const i = frontier[0]!;
        const tail = frontier.pop()!;
        if (frontier.length > 0) {
          let k = 0;
          frontier[0] = tail;
          for (;;) {
            const l = 2 * k + 1;
            if (l >= frontier.length) break;
            const r = l + 1;
            const c = r < frontier.length && lessAt(frontier[r]!, frontier[l]!) ? r : l;
            if (!lessAt(frontier[c]!, frontier[k]!)) break;
            [frontier[c], frontier[k]] = [frontier[k]!, frontier[c]!];
            k = c;
          }
        }
        step();
        if (accept(a[i]!)) return a[i];
        for (const child of [2 * i + 1, 2 * i + 2]) {
          if (child >= a.length) continue;
          frontier.push(child);
          let k = frontier.length - 1;
          while (k > 0) {
            const p = (k - 1) >> 1;
            if (!lessAt(frontier[k]!, frontier[p]!)) break;
            [frontier[p], frontier[k]] = [frontier[k]!, frontier[p]!];
            k = p;
          }
        }
      }
      return undefined;
    },
    values: () => a.values(),
  };
};
