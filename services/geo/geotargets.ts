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
   * targets below this one, counted from the canonical names: "Austin,Texas,United States" lies below
   * "Texas,United States" and "United States"
   */
  descendants: number;
  /**
   * people: a city's GeoNames population, a region's or a country's the sum of the cities below it that have one; 0
   * when unknown (docs/locations.md). Google's file has none: scripts/build-locations.ts joins it.
   */
  population: number;
}

export interface GeotargetIndex {
  size: number;
  /** the target a location name means: exact canonical name, any case and spacing; active targets first */
  byName(name: string): Geotarget | undefined;
  byId(id: number): Geotarget | undefined;
  /**
   * Ranked search for a partial name: exact name, then name prefix, then a word of the canonical name by prefix, then
   * names one typo away; within each, the most populous first (then countries before regions before cities, then by
   * how many targets lie below).
   */
  search(query: string, limit: number): Geotarget[];
  /** every target whose name, or the first part of whose canonical name, is `part` (any case and spacing) */
  byFirstPart(part: string): Geotarget[];
  /** the most populous active targets, largest first */
  largest(limit: number): Geotarget[];
}

export const SHIPPED_FORMAT = 'v2';

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
/** exported for the test's reference index, which ranks as the index does */
export const typeRank = (type: string) => TYPE_RANK[type] ?? 5;

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
    if (f.length < 8) continue;
    out.push({
      id: Number(f[0]),
      name: f[1]!,
      canonicalName: f[2]!,
      ...(f[3] ? { parentId: Number(f[3]) } : {}),
      countryCode: intern(f[4]!),
      targetType: intern(f[5]!),
      active: f[6] === '1',
      descendants: 0,
      population: Number(f[7]) || 0,
    });
  }
  return out;
};

/** Edit distance, stopped early once it exceeds `max` (only "one typo away" is asked). */
export const withinDistance = (a: string, b: string, max: number): boolean => {
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

/** First index below `count` whose string (`at`) is >= value, in a list sorted ascending. */
const lowerBound = (count: number, at: (i: number) => string, value: string): number => {
  let lo = 0;
  let hi = count;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (at(mid) < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
};

/** A pattern that matches `text` as it is. */
const literal = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A copy that does not keep alive the text it was cut from: V8 keeps a substring as a slice of its parent string. */
const own = (s: string): string => structuredClone(s);

/** A character beyond Latin-1: V8 then stores the whole string at two bytes a character. */
const WIDE = /[\u0100-\uffff]/;

/**
 * Many short strings as slices of one long one: one object for the GC to trace instead of one per string, at one
 * byte a character. The few strings with a character beyond Latin-1 (some Cyrillic names, an en dash) would make the
 * whole text two bytes a character, so those stay apart, each on its own.
 */
class PackedStrings {
  readonly size: number;
  /** string i is text[at[i], at[i + 1]); an empty slice is either '' or a string kept apart */
  private readonly at: Int32Array;
  private readonly text: string;
  private readonly apart = new Map<number, string>();

  constructor(values: readonly string[]) {
    this.size = values.length;
    this.at = new Int32Array(values.length + 1);
    const latin1: string[] = [];
    let end = 0;
    values.forEach((v, i) => {
      this.at[i] = end;
      if (WIDE.test(v)) this.apart.set(i, own(v));
      else {
        latin1.push(v);
        end += v.length;
      }
    });
    this.at[values.length] = end;
    // joining substrings of a two-byte text (the file is one, for those few names) gives a two-byte string: decoding
    // its Latin-1 bytes again gives one byte a character (off the V8 heap, as an external string, once over ~1 MB)
    this.text = Buffer.from(latin1.join(''), 'latin1').toString('latin1');
  }

  get(i: number): string {
    const from = this.at[i]!;
    const to = this.at[i + 1]!;
    return from === to ? (this.apart.get(i) ?? '') : this.text.slice(from, to);
  }

  length(i: number): number {
    const from = this.at[i]!;
    const to = this.at[i + 1]!;
    return from === to ? (this.apart.get(i)?.length ?? 0) : to - from;
  }

  /** get(i).startsWith(prefix), without making the string */
  startsWith(i: number, prefix: string): boolean {
    const from = this.at[i]!;
    const to = this.at[i + 1]!;
    if (from === to) return (this.apart.get(i) ?? '').startsWith(prefix);
    return to - from >= prefix.length && this.text.startsWith(prefix, from);
  }
}

/**
 * The targets' canonical names, as slices of one long string, and their names: the beginning of the canonical name
 * for all but a handful, so a length, not a second copy.
 */
class TargetNames {
  readonly canonical: PackedStrings;
  private readonly nameLength: Int32Array;
  private readonly otherNames = new Map<number, string>();

  constructor(targets: readonly Geotarget[]) {
    this.canonical = new PackedStrings(targets.map((t) => t.canonicalName));
    this.nameLength = new Int32Array(targets.length);
    targets.forEach((t, i) => {
      if (t.canonicalName.startsWith(t.name)) this.nameLength[i] = t.name.length;
      else this.otherNames.set(i, own(t.name));
    });
  }

  name(i: number): string {
    return this.otherNames.get(i) ?? this.canonical.get(i).slice(0, this.nameLength[i]);
  }
}

/** Ids live in Int32Arrays: Google's Criteria IDs are positive and 7 digits at most. */
const criteriaId = (id: number): number => {
  if (!Number.isInteger(id) || id < 0 || id > 0x7fffffff) throw new Error(`geotarget id ${id} is not a Criteria ID`);
  return id;
};

/** What a target shares with thousands of others: its country, its type and whether it is active. */
interface Kind {
  countryCode: string;
  targetType: string;
  active: boolean;
  rank: number;
}

/**
 * The index's columns, built from the targets. Apart from the closures that query them: a closure keeps alive every
 * variable of its scope that any closure made there uses, and the build's (the targets, their keys, the word lists)
 * must go once it is done.
 */
const columnsOf = (targets: Geotarget[]) => {
  const n = targets.length;
  const names = new TargetNames(targets);
  const { canonical } = names;
  // from the packed text, not the targets' strings: those are slices of the file's text, two bytes a character for
  // its few Cyrillic names, and one-byte keys and words split, hash and sort about twice as fast
  const keys = targets.map((_, i) => lookupKey(canonical.get(i)));
  // the lookup key is the lower-cased canonical name for all but a few dozen oddly spaced ones
  const otherKeys = new Map<number, string>();
  keys.forEach((key, i) => {
    if (key !== canonical.get(i).toLowerCase()) otherKeys.set(i, own(key));
  });
  const ids = new Int32Array(n);
  /** -1: none */
  const parentIds = new Int32Array(n);
  // ~250 country codes, a few target types, active or not: a small table, and a Uint16 per target into it
  const kinds: Kind[] = [];
  const kindAt = new Map<string, number>();
  const kindOf = new Uint16Array(n);
  targets.forEach((t, i) => {
    ids[i] = criteriaId(t.id);
    parentIds[i] = t.parentId === undefined ? -1 : criteriaId(t.parentId);
    // tab-free fields: the file is tab-separated
    const kind = `${t.countryCode}\t${t.targetType}\t${t.active}`;
    let at = kindAt.get(kind);
    if (at === undefined) {
      if (kinds.length > 0xffff) throw new Error('more than 65,536 kinds of geotarget');
      at = kinds.length;
      const { countryCode, targetType, active } = t;
      kinds.push({ countryCode: own(countryCode), targetType: own(targetType), active, rank: typeRank(targetType) });
      kindAt.set(kind, at);
    }
    kindOf[i] = at;
  });

  // the target a key means: the first active one, else the first
  const byKey = new Map<string, number>();
  keys.forEach((key, i) => {
    const seen = byKey.get(key);
    if (seen === undefined || (!targets[seen]!.active && targets[i]!.active)) byKey.set(key, i);
  });
  const descendants = new Int32Array(n);
  const population = new Int32Array(n);
  targets.forEach((t, i) => {
    population[i] = Math.min(t.population || 0, 0x7fffffff);
  });
  // Google's current file leaves Parent ID empty: the canonical name's tail names the parent instead
  keys.forEach((key, i) => {
    let tail = key;
    let first = true;
    for (let cut = tail.indexOf(','); cut >= 0; cut = tail.indexOf(',')) {
      tail = tail.slice(cut + 1);
      const ancestor = byKey.get(tail);
      if (ancestor === undefined) continue;
      descendants[ancestor]! += 1;
      if (first && parentIds[i]! < 0) parentIds[i] = ids[ancestor]!;
      first = false;
    }
  });

  // every word of the canonical name, so "texas" finds Texas and its cities, "austin" finds Austin, Texas: each
  // distinct word once, sorted, and the targets that hold it as a run of indexes in one Int32Array, not a [word,
  // target] pair each. The lower-cased name is one of the words too, so a target keeps just the index of its own.
  const wordId = new Map<string, number>();
  /** the targets that hold each word, by its wordId */
  const holders: number[][] = [];
  let total = 0;
  const hold = (word: string, i: number): number => {
    let id = wordId.get(word);
    if (id === undefined) {
      id = holders.push([]) - 1;
      wordId.set(word, id);
    }
    holders[id]!.push(i);
    total += 1;
    return id;
  };
  // by name, a target is found among the holders of a word of its key; a key without one ("", ",") is not
  const wordless = new Map<string, number>();
  /** the wordId of each target's lower-cased name */
  const nameId = new Int32Array(n);
  keys.forEach((key, i) => {
    const seen = new Set<string>();
    for (const w of key.split(/[ ,]+/)) {
      if (!w || seen.has(w)) continue;
      seen.add(w);
      hold(w, i);
    }
    if (seen.size === 0) wordless.set(key, byKey.get(key)!);
    const name = names.name(i).toLowerCase();
    nameId[i] = seen.has(name) ? wordId.get(name)! : hold(name, i);
  });
  const sorted = [...wordId.keys()].sort();
  const runStart = new Int32Array(sorted.length + 1);
  const holding = new Int32Array(total);
  const wordOfId = new Int32Array(holders.length);
  sorted.forEach((w, j) => {
    const id = wordId.get(w)!;
    wordOfId[id] = j;
    holding.set(holders[id]!, runStart[j]!);
    runStart[j + 1] = runStart[j]! + holders[id]!.length;
  });

  return {
    ids,
    parentIds,
    descendants,
    population,
    kinds,
    kindOf,
    names,
    otherKeys,
    wordless,
    words: new PackedStrings(sorted),
    runStart,
    holding,
    /** the index in `words` of each target's lower-cased name */
    nameWord: nameId.map((id) => wordOfId[id]!),
  };
};

/**
 * Builds the in-memory index (~0.4 s for the shipped ~50k targets, once per process). It lives in the API process's
 * heap for good, and every major GC walks it, so it is columnar: typed arrays per field, the text as slices of a few
 * long strings, and a Geotarget object made only for the targets a call returns: ~5 MB in all, against ~25 MB for
 * an object per target. Prefix search is a binary search over the sorted words of every canonical name, so it touches
 * only the targets that hold a matching word; a lookup by name goes through the same words.
 */
export const indexGeotargets = (targets: Geotarget[]): GeotargetIndex => {
  const columns = columnsOf(targets);
  const { ids, parentIds, descendants, population, kinds, kindOf, names, otherKeys, wordless, words } = columns;
  const { runStart, holding, nameWord } = columns;
  const n = ids.length;
  const { canonical } = names;
  const keyOf = (i: number) => otherKeys.get(i) ?? canonical.get(i).toLowerCase();
  const word = (j: number) => words.get(j);
  /** the index of a word in `words`, or -1 */
  const wordIndex = (w: string): number => {
    const j = lowerBound(words.size, word, w);
    return j < words.size && word(j) === w ? j : -1;
  };
  /** every target sorted by id, in file order among equal ids */
  const byId = new Int32Array(n).map((_, i) => i).sort((a, b) => ids[a]! - ids[b]! || a - b);

  const target = (i: number): Geotarget => {
    const { countryCode, targetType, active } = kinds[kindOf[i]!]!;
    const t: Geotarget = {
      id: ids[i]!,
      name: names.name(i),
      canonicalName: canonical.get(i),
      countryCode,
      targetType,
      active,
      descendants: descendants[i]!,
      population: population[i]!,
    };
    // last, where the object index put the parent it found from the canonical name
    if (parentIds[i]! >= 0) t.parentId = parentIds[i]!;
    return t;
  };
  /**
   * The target a lookup key means (the first active one, else the first), or -1: among the holders of the key's
   * rarest word, who hold it in file order.
   */
  const rowOfKey = (key: string): number => {
    let rarest = -1;
    for (const w of key.split(/[ ,]+/)) {
      if (!w) continue;
      const j = wordIndex(w);
      if (j < 0) return -1;
      if (rarest < 0 || runStart[j + 1]! - runStart[j]! < runStart[rarest + 1]! - runStart[rarest]!) rarest = j;
    }
    if (rarest < 0) return wordless.get(key) ?? -1;
    let found = -1;
    for (let r = runStart[rarest]!; r < runStart[rarest + 1]!; r++) {
      const i = holding[r]!;
      if (keyOf(i) !== key) continue;
      if (kinds[kindOf[i]!]!.active) return i;
      if (found < 0) found = i;
    }
    return found;
  };
  const order = (a: number, b: number) => {
    const ka = kinds[kindOf[a]!]!;
    const kb = kinds[kindOf[b]!]!;
    return (
      Number(kb.active) - Number(ka.active) ||
      population[b]! - population[a]! ||
      ka.rank - kb.rank ||
      descendants[b]! - descendants[a]! ||
      canonical.length(a) - canonical.length(b) ||
      ids[a]! - ids[b]!
    );
  };

  /** the most populous active targets, made once on first use */
  let byPopulation: Int32Array | undefined;

  return {
    size: n,
    byFirstPart(part) {
      const key = lookupKey(part);
      let rarest = -1;
      for (const w of key.split(/[ ,]+/)) {
        if (!w) continue;
        const j = wordIndex(w);
        if (j < 0) return [];
        if (rarest < 0 || runStart[j + 1]! - runStart[j]! < runStart[rarest + 1]! - runStart[rarest]!) rarest = j;
      }
      if (rarest < 0 || key.includes(',')) return [];
      const out: Geotarget[] = [];
      for (let r = runStart[rarest]!; r < runStart[rarest + 1]!; r++) {
        const i = holding[r]!;
        const k = keyOf(i);
        if ((k.startsWith(key) && (k.length === key.length || k[key.length] === ',')) || word(nameWord[i]!) === key)
          out.push(target(i));
      }
      return out;
    },
    largest(limit) {
      byPopulation ??= new Int32Array(n)
        .map((_, i) => i)
        .filter((i) => kinds[kindOf[i]!]!.active && population[i]! > 0)
        .sort(order);
      return [...byPopulation.subarray(0, Math.max(0, Math.min(limit, 500)))].map(target);
    },
    byName(name) {
      const i = rowOfKey(lookupKey(name));
      return i < 0 ? undefined : target(i);
    },
    byId(id) {
      // the last of equal ids, as a Map filled in file order would keep
      let lo = 0;
      let hi = n;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (ids[byId[mid]!]! <= id) lo = mid + 1;
        else hi = mid;
      }
      return lo > 0 && ids[byId[lo - 1]!] === id ? target(byId[lo - 1]!) : undefined;
    },
    search(query, limit) {
      const key = lookupKey(query);
      const max = Math.max(0, Math.min(limit, 500));
      if (!key || max === 0) return [];
      const tiers: number[][] = [[], [], [], []];
      const taken = new Set<number>();
      const add = (tier: number, i: number) => {
        if (taken.has(ids[i]!)) return;
        taken.add(ids[i]!);
        tiers[tier]!.push(i);
      };
      const exact = rowOfKey(key);
      if (exact >= 0) add(0, exact);
      // the first word decides the candidates; the rest of the query must appear in the key, its commas read as
      // spaces ("york united" is in "new york,new york,united states"): one pattern, not a rewritten copy of each key
      const [first = '', ...rest] = key.split(/[ ,]+/).filter(Boolean);
      const restPattern = rest.length ? new RegExp(literal(rest.join(' ')).replace(/ /g, '[ ,]')) : undefined;
      // the words that begin with `first` are one stretch [from, to) of the sorted words, so their holders are one
      // stretch of `holding`, and "the name begins with it" is "the name's word lies in the stretch"
      const from = lowerBound(words.size, word, first);
      let to = from;
      while (to < words.size && words.startsWith(to, first)) to++;
      const keyWord = wordIndex(key);
      for (let r = runStart[from]!; r < runStart[to]!; r++) {
        const i = holding[r]!;
        if (taken.has(ids[i]!)) continue;
        if (restPattern && !restPattern.test(keyOf(i))) continue;
        const name = nameWord[i]!;
        add(name === keyWord ? 0 : name >= from && name < to ? 1 : 2, i);
      }
      if (tiers[0]!.length + tiers[1]!.length + tiers[2]!.length < max && key.length >= 4) {
        // one typo away ("austn") but in the first letter, only when the prefixes found too little: a scan of the
        // words with that first letter (one stretch of the sorted words), then of the targets whose name came near
        const near = new Uint8Array(words.size);
        const letter = key[0]!;
        for (let j = lowerBound(words.size, word, letter); j < words.size && words.startsWith(j, letter); j++) {
          if (withinDistance(word(j), key, 1)) near[j] = 1;
        }
        for (let i = 0; i < n; i++) if (near[nameWord[i]!]) add(3, i);
      }
      const out: Geotarget[] = [];
      for (const tier of tiers) {
        tier.sort(order);
        for (const i of tier) {
          if (out.length >= max) return out;
          out.push(target(i));
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
