import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';

/** One Google Ads geotarget, as shipped in `data/geotargets.tsv.gz` (scripts/build-locations.ts). */
export interface Geotarget {
  id: number;
  name: string;
  canonicalName: string;
  parentId?: number;
  countryCode: string;
  targetType: string;
  active: boolean;
  /**
   * targets below this one (a proxy for reach: Google's file has no population), counted from the canonical names:
   * "Austin,Texas,United States" lies below "Texas,United States" and "United States"
   */
  descendants: number;
}

export interface GeotargetIndex {
  size: number;
  /** the target a location name means: exact canonical name, any case and spacing; active targets first */
  byName(name: string): Geotarget | undefined;
  byId(id: number): Geotarget | undefined;
  /**
   * Ranked search for a partial name: exact name, then name prefix, then a word of the canonical name by prefix, then
   * names one typo away; within each, countries before regions before cities, then by how many targets lie below.
   */
  search(query: string, limit: number): Geotarget[];
}

export const SHIPPED_FORMAT = 'v1';

/** "Austin, Texas, United States" and "austin,texas,united states" both find "Austin,Texas,United States". */
export const lookupKey = (name: string): string =>
  name
    .trim()
    .replace(/\s*,\s*/g, ',')
    .replace(/\s+/g, ' ')
    .toLowerCase();

/** Bigger kinds of place first; anything unlisted (airports, universities, neighbourhoods…) after cities. */
const TYPE_RANK: Record<string, number> = {
  Country: 0,
  State: 1,
  Region: 1,
  Province: 1,
  Territory: 1,
  Prefecture: 1,
  'Autonomous Community': 1,
  Department: 2,
  'DMA Region': 2,
  Governorate: 2,
  County: 3,
  Municipality: 3,
  City: 3,
  District: 4,
  'City Region': 4,
  Borough: 5,
  Neighborhood: 6,
  'Postal Code': 8,
};
const typeRank = (type: string) => TYPE_RANK[type] ?? 5;

/** The shipped file: `data/` at the package root, found from here in the source tree and in `dist/`. */
export const shippedGeotargetsPath = (): string | undefined => {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    const candidate = join(dir, 'data', 'geotargets.tsv.gz');
    if (existsSync(candidate)) return candidate;
    dir = dirname(dir);
  }
  return undefined;
};

/** Parses the shipped TSV; throws on a format it does not know (a newer file from a newer build). */
export const parseGeotargets = (text: string): Geotarget[] => {
  const lines = text.split('\n');
  const head = lines[0]?.split('\t') ?? [];
  if (head[0] !== '#serp-api-geotargets' || head[1] !== SHIPPED_FORMAT) {
    throw new Error(`not a ${SHIPPED_FORMAT} geotargets file (first line: ${JSON.stringify(lines[0]?.slice(0, 60))})`);
  }
  const out: Geotarget[] = [];
  // ~250 country codes and ~30 target types over 50k rows: one string each, not one per row
  const interned = new Map<string, string>();
  const intern = (v: string) => {
    const seen = interned.get(v);
    if (seen !== undefined) return seen;
    interned.set(v, v);
    return v;
  };
  for (let i = 1; i < lines.length; i++) {
    const f = lines[i]!.split('\t');
    if (f.length < 7) continue;
    out.push({
      id: Number(f[0]),
      name: f[1]!,
      canonicalName: f[2]!,
      ...(f[3] ? { parentId: Number(f[3]) } : {}),
      countryCode: intern(f[4]!),
      targetType: intern(f[5]!),
      active: f[6] === '1',
      descendants: 0,
    });
  }
  return out;
};

/** Edit distance, stopped early once it exceeds `max` (only "one typo away" is asked). */
const withinDistance = (a: string, b: string, max: number): boolean => {
  if (Math.abs(a.length - b.length) > max) return false;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const v = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      cur.push(v);
      best = Math.min(best, v);
    }
    if (best > max) return false;
    prev = cur;
  }
  return prev[b.length]! <= max;
};

/** First index in the sorted `keys` whose value is >= prefix. */
const lowerBound = (keys: readonly string[], prefix: string): number => {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (keys[mid]! < prefix) lo = mid + 1;
    else hi = mid;
  }
  return lo;
};

/**
 * Builds the in-memory index: ~50k targets load in well under 100 ms. Prefix search is a binary search over the
 * sorted words of every canonical name, so a lookup touches only the targets that match.
 */
export const indexGeotargets = (targets: Geotarget[]): GeotargetIndex => {
  const byId = new Map(targets.map((t) => [t.id, t]));
  const keys = targets.map((t) => lookupKey(t.canonicalName));
  const byKey = new Map<string, Geotarget>();
  targets.forEach((t, i) => {
    const seen = byKey.get(keys[i]!);
    if (!seen || (!seen.active && t.active)) byKey.set(keys[i]!, t);
  });
  // Google's current file leaves Parent ID empty: the canonical name's tail names the parent instead
  targets.forEach((t, i) => {
    let tail = keys[i]!;
    let first = true;
    for (let cut = tail.indexOf(','); cut >= 0; cut = tail.indexOf(',')) {
      tail = tail.slice(cut + 1);
      const ancestor = byKey.get(tail);
      if (!ancestor) continue;
      ancestor.descendants += 1;
      if (first && t.parentId === undefined) t.parentId = ancestor.id;
      first = false;
    }
  });
  // every word of the canonical name, so "texas" finds Texas and its cities, "austin" finds Austin, Texas. Kept
  // compact (the index lives in the API process's heap for good, and every major GC walks it): each distinct word
  // once, sorted, and the targets that hold it as a run of indexes in one Int32Array, not a [word, target] pair each.
  const holders = new Map<string, number[]>();
  targets.forEach((t, i) => {
    const seen = new Set<string>();
    for (const w of keys[i]!.split(/[ ,]+/)) {
      if (!w || seen.has(w)) continue;
      seen.add(w);
      const list = holders.get(w);
      if (list) list.push(i);
      else holders.set(w, [i]);
    }
    const name = t.name.toLowerCase();
    if (!seen.has(name)) {
      const list = holders.get(name);
      if (list) list.push(i);
      else holders.set(name, [i]);
    }
  });
  const words = [...holders.keys()].sort();
  const runStart = new Int32Array(words.length + 1);
  let total = 0;
  words.forEach((w, j) => {
    runStart[j] = total;
    total += holders.get(w)!.length;
  });
  runStart[words.length] = total;
  const holding = new Int32Array(total);
  words.forEach((w, j) => {
    holding.set(holders.get(w)!, runStart[j]!);
  });
  holders.clear();
  /** lower-cased names for the typo scan, made the first time a query needs one */
  let names: string[] | undefined;

  const order = (a: Geotarget, b: Geotarget) =>
    Number(b.active) - Number(a.active) ||
    typeRank(a.targetType) - typeRank(b.targetType) ||
    b.descendants - a.descendants ||
    a.canonicalName.length - b.canonicalName.length ||
    a.id - b.id;

  return {
    size: targets.length,
    byName: (name) => byKey.get(lookupKey(name)),
    byId: (id) => byId.get(id),
    search(query, limit) {
      const key = lookupKey(query);
      const max = Math.max(0, Math.min(limit, 500));
      if (!key || max === 0) return [];
      const tiers: Geotarget[][] = [[], [], [], []];
      const taken = new Set<number>();
      const add = (tier: number, t: Geotarget) => {
        if (taken.has(t.id)) return;
        taken.add(t.id);
        tiers[tier]!.push(t);
      };
      const exact = byKey.get(key);
      if (exact) add(0, exact);
      // the first word decides the candidates; the rest of the query must appear in the canonical name
      const [first = '', ...rest] = key.split(/[ ,]+/).filter(Boolean);
      const restKey = rest.join(' ');
      for (let j = lowerBound(words, first); j < words.length && words[j]!.startsWith(first); j++) {
        for (let r = runStart[j]!; r < runStart[j + 1]!; r++) {
          const i = holding[r]!;
          const t = targets[i]!;
          if (taken.has(t.id)) continue;
          if (restKey && !keys[i]!.replace(/,/g, ' ').includes(restKey)) continue;
          const name = t.name.toLowerCase();
          add(name === key ? 0 : name.startsWith(first) ? 1 : 2, t);
        }
      }
      if (tiers[0]!.length + tiers[1]!.length + tiers[2]!.length < max && key.length >= 4) {
        // one typo away ("austn"), only when the prefixes found too little: this one is a scan
        names ??= targets.map((t) => t.name.toLowerCase());
        for (let i = 0; i < names.length; i++) {
          if (names[i]![0] === key[0] && withinDistance(names[i]!, key, 1)) add(3, targets[i]!);
        }
      }
      const out: Geotarget[] = [];
      for (const tier of tiers) {
        tier.sort(order);
        for (const t of tier) {
          if (out.length >= max) return out;
          out.push(t);
        }
      }
      return out;
    },
  };
};

let shipped: GeotargetIndex | null | undefined;

/** The index of the shipped file, loaded once per process; null when the file is missing or unreadable. */
export const shippedGeotargets = (): GeotargetIndex | null => {
  if (shipped !== undefined) return shipped;
  const path = shippedGeotargetsPath();
  try {
    shipped = path ? indexGeotargets(parseGeotargets(gunzipSync(readFileSync(path)).toString('utf8'))) : null;
  } catch {
    shipped = null;
  }
  return shipped;
};
