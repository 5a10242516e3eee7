import t from 'tap';
import { indexGeotargets, parseGeotargets, shippedGeotargets } from '../../services/geo/geotargets.js';

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
  t.throws(() => parseGeotargets('Criteria ID,Name\n1,x\n'), /not a v1 geotargets file/);
  const one = indexGeotargets(parseGeotargets('#serp-api-geotargets\tv1\tx\t1\n5\tSpot\tSpot,Land\t\tXX\tCity\t1\n'));
  t.equal(one.byName('spot, land')?.id, 5);
});
