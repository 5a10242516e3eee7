import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { gunzipSync } from 'node:zlib';
import t from 'tap';
import {
  type Geotarget,
  type GeotargetIndex,
  indexGeotargets,
  lookupKey,
  parseGeotargets,
  shippedGeotargets,
  shippedGeotargetsPath,
  typeRank,
  withinDistance,
} from '../../services/geo/geotargets.js';

t.test('shipped geotargets', async (t) => {
  const index = shippedGeotargets();
  if (!index) throw new Error('data/geotargets.tsv.gz is part of the product and must load');
  t.ok(index.size > 40_000, `every target of Google's list (${index.size})`);

  t.test('byName › any case and spacing around commas, active first', async (t) => {
    t.equal(index.byName('austin , TEXAS,united   states')?.canonicalName, 'Austin,Texas,United States');
    t.equal(index.byName('Austin, Texas, United States')?.countryCode, 'US');
    t.equal(index.byName('Nowhere, Texas'), undefined);
  });

  t.test('search › a state before the cities named after it, a country before its regions', async (t) => {
    const texas = index.search('texas', 5);
    t.equal(texas[0]?.canonicalName, 'Texas,United States');
    t.ok(
      texas.every((x) => /texas/i.test(x.canonicalName)),
      'every hit has the word',
    );
    t.equal(index.search('united', 3)[0]?.canonicalName, 'United States', 'the biggest by targets below it');
  });

  t.test('search › the words after the first narrow it down', async (t) => {
    const hits = index.search('Austin, Texas', 10);
    t.equal(hits[0]?.canonicalName, 'Austin,Texas,United States', 'the exact name first');
    t.ok(
      hits.every((x) => x.canonicalName.includes('Texas')),
      'only Texan places',
    );
  });

  t.test('search › one typo away when the prefixes find too little', async (t) => {
    t.ok(
      index.search('austn', 10).some((x) => x.canonicalName === 'Austin,Texas,United States'),
      'austn finds Austin',
    );
  });

  t.test('search › limits and empty queries', async (t) => {
    t.equal(index.search('a', 7).length, 7);
    t.same(index.search('', 10), []);
    t.same(index.search('   ', 10), []);
    t.same(index.search('austin', 0), []);
    t.ok(index.search('a', 100_000).length <= 500, 'capped at 500');
    t.same(index.search('\u0000<script>', 10), []);
  });

  t.test('parent ids come from the canonical name when the file has none', async (t) => {
    const austin = index.byName('Austin,Texas,United States');
    t.equal(austin?.parentId, index.byName('Texas,United States')?.id);
  });
});

t.test('parseGeotargets refuses a file in another format', async (t) => {
  t.throws(() => parseGeotargets('Criteria ID,Name\n1,x\n'), /not a v2 geotargets file/);
  t.throws(() => parseGeotargets('#serp-api-geotargets\tv1\tx\t1\n5\tSpot\tSpot,Land\t\tXX\tCity\t1\n'), /v2/);
  const one = indexGeotargets(
    parseGeotargets('#serp-api-geotargets\tv2\tx\t1\n5\tSpot\tSpot,Land\t\tXX\tCity\t1\t1200\n'),
  );
  t.equal(one.byName('spot, land')?.id, 5);
  t.equal(one.byName('spot, land')?.population, 1200);
});

/**
 * The index as it was before it went columnar (one object per target, Maps by id and by key), kept as the reference
 * the compact one must answer exactly like; it ranks with the index's own `typeRank` and `withinDistance`, which the
 * rewrite left as they were. It fills in `descendants` and `parentId` on the objects it is given.
 */
const referenceIndex = (targets: Geotarget[]): Pick<GeotargetIndex, 'size' | 'byName' | 'byId' | 'search'> => {
  const byId = new Map(targets.map((t) => [t.id, t]));
  const keys = targets.map((t) => lookupKey(t.canonicalName));
  const byKey = new Map<string, Geotarget>();
  targets.forEach((t, i) => {
    const seen = byKey.get(keys[i]!);
    if (!seen || (!seen.active && t.active)) byKey.set(keys[i]!, t);
  });
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
  const holders = new Map<string, number[]>();
  const hold = (w: string, i: number) => {
    const list = holders.get(w);
    if (list) list.push(i);
    else holders.set(w, [i]);
  };
  targets.forEach((t, i) => {
    const seen = new Set<string>();
    for (const w of keys[i]!.split(/[ ,]+/)) {
      if (!w || seen.has(w)) continue;
      seen.add(w);
      hold(w, i);
    }
    const name = t.name.toLowerCase();
    if (!seen.has(name)) hold(name, i);
  });
  const words = [...holders.keys()].sort();
  const names = targets.map((t) => t.name.toLowerCase());
  const order = (a: Geotarget, b: Geotarget) =>
    Number(b.active) - Number(a.active) ||
    b.population - a.population ||
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
      const [first = '', ...rest] = key.split(/[ ,]+/).filter(Boolean);
      const restKey = rest.join(' ');
      for (const w of words) {
        if (!w.startsWith(first)) continue;
        for (const i of holders.get(w)!) {
          const t = targets[i]!;
          if (taken.has(t.id)) continue;
          if (restKey && !keys[i]!.replace(/,/g, ' ').includes(restKey)) continue;
          add(names[i] === key ? 0 : names[i]!.startsWith(first) ? 1 : 2, t);
        }
      }
      if (tiers[0]!.length + tiers[1]!.length + tiers[2]!.length < max && key.length >= 4) {
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

const SEARCHES = [
  'austin',
  'Austin, Texas',
  'austin texas',
  'AUSTIN ,  TEXAS , united states',
  'texas',
  'texas, united states',
  'united states, texas',
  'new york',
  'New York, New York',
  'york',
  'new',
  'par',
  'paris',
  'london',
  'san fr',
  'san francisco, california',
  'los angeles',
  'munich',
  'toky',
  'tokyo',
  'united',
  'united states',
  'germany',
  'bayern',
  'a',
  'b',
  'z',
  'st',
  'saint',
  'springfield',
  'county',
  'city',
  'austn',
  'londn',
  'berln',
  'parris',
  'springfeld',
  'mnich',
  'tokio',
  'Torreón',
  'torreon',
  'Тарасовка',
  'тарасовк',
  'north ossetia',
  "saint-pierre-de-l'ile",
  'xyzzy',
  'qqqq',
  '',
  '   ',
  ',',
  ', texas',
  'a b c',
  'st louis',
  'barre (city',
  'barre (town), vermont',
  'new york)',
  'a .* b',
  'x [ ] { } | ? + ^ $ \\',
  'z'.repeat(300),
  '\u0000<script>',
  '%',
];

const sample = <T>(xs: readonly T[], every: number) => xs.filter((_, i) => i % every === 0);

t.test('the compact index answers exactly as the object index it replaced', async (t) => {
  const path = shippedGeotargetsPath();
  if (!path) throw new Error('data/geotargets.tsv.gz is part of the product and must load');
  const text = gunzipSync(readFileSync(path)).toString('utf8');
  const index = shippedGeotargets()!;
  const reference = referenceIndex(parseGeotargets(text));
  const targets = parseGeotargets(text);
  t.equal(index.size, reference.size);

  const differing = (lookups: (readonly [string, Geotarget | undefined, Geotarget | undefined])[]) =>
    lookups.filter(([, a, b]) => !isDeepStrictEqual(a, b)).slice(0, 5);
  t.same(
    differing(targets.map((x) => [String(x.id), index.byId(x.id), reference.byId(x.id)] as const)),
    [],
    'every target by id, descendants and parent ids included',
  );
  const ids = [0, -1, 1.5, Number.NaN, 2 ** 31, 2 ** 53, ...sample(targets, 97).flatMap((x) => [x.id - 1, x.id + 1])];
  t.same(differing(ids.map((id) => [String(id), index.byId(id), reference.byId(id)] as const)), [], 'ids in between');

  const names = sample(targets, 131).flatMap(({ canonicalName: c }) => [
    c,
    c.toUpperCase(),
    c.toLowerCase().replace(/,/g, ', '),
    `  ${c.replace(/,/g, ' ,  ').replace(/ /g, '  ')} `,
    c.slice(0, -1),
    c.slice(c.indexOf(',') + 1),
  ]);
  t.ok(names.length > 1000, `${names.length} names`);
  t.same(differing(names.map((n) => [n, index.byName(n), reference.byName(n)] as const)), [], 'by name');

  for (const limit of [1, 10, 500]) {
    const hits = SEARCHES.map((q) => [q, index.search(q, limit), reference.search(q, limit)] as const);
    t.same(
      hits.filter(([, a, b]) => !isDeepStrictEqual(a, b)).map(([q]) => q),
      [],
      `${SEARCHES.length} searches, limit ${limit}`,
    );
  }
});

t.test('the compact index: active before inactive, first of equals, the last of one id', async (t) => {
  const targets = (): Geotarget[] =>
    [
      [7, 'Spot', 'Spot,Land', 'XX', 'City', false],
      [8, 'Spot', 'spot , land', 'XX', 'City', true],
      [9, 'Spot', 'Spot,Land', 'XX', 'City', true],
      [3, 'Land', 'Land', 'XX', 'Country', true],
      [7, 'Spotty', 'Spotty,Land', 'XX', 'Neighborhood', true],
      [12, 'Lande', 'Lande,Land', 'YY', 'Region', false],
      [11, 'Other', 'Ла,Land', 'XX', 'Made Up Type', true],
      [13, '', ' , ', 'XX', 'City', true],
    ].map(([id, name, canonicalName, countryCode, targetType, active]) => ({
      id: id as number,
      name: name as string,
      canonicalName: canonicalName as string,
      countryCode: countryCode as string,
      targetType: targetType as string,
      active: active as boolean,
      descendants: 0,
      population: 0,
    }));
  const index = indexGeotargets(targets());
  const reference = referenceIndex(targets());
  t.equal(index.byName('spot,land')?.id, 8, 'the first active one');
  t.equal(index.byId(7)?.name, 'Spotty', 'the last of one id');
  t.equal(index.byName('land')?.descendants, 6, 'every target below it, duplicates too');
  t.equal(index.byName(',')?.id, 13, 'a name without a word');
  for (const q of ['spot', 'land', 'spot land', 'lnd', 'spto', 'ла', 'other', 'l', ',']) {
    t.strictSame(index.search(q, 10), reference.search(q, 10), q);
  }
  for (const n of ['Spot, Land', 'Land', 'Lande,Land', 'ла, land'])
    t.strictSame(index.byName(n), reference.byName(n), n);
  for (const id of [3, 7, 8, 9, 11, 12, 13]) t.strictSame(index.byId(id), reference.byId(id), String(id));
  t.throws(() => indexGeotargets([{ ...targets()[0]!, id: 2 ** 31 }]), /not a Criteria ID/, 'ids are kept as int32');
});
