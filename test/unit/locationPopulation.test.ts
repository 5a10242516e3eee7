import t from 'tap';
import { foldName, joinPopulation, type PopulatedPlace, type TargetRow } from '../../services/geo/population.js';

/**
 * How the locations table gets its populations at build time (docs/locations.md, scripts/build-locations.ts): cities
 * joined to GeoNames by name and country, a name shared by two places told apart by region, and regions and countries
 * the sum of their cities. The population orders the suggestions a user sees for an ambiguous place.
 */
const row = (canonicalName: string, targetType: string, countryCode = 'US'): TargetRow => ({
  canonicalName,
  countryCode,
  targetType,
});
const place = (name: string, adminCode: string, population: number, country = 'US'): PopulatedPlace => ({
  name,
  country,
  adminCode,
  population,
});

t.test('location populations › names are folded', async (t) => {
  t.equal(foldName(' Zürich '), 'zurich', 'accents, case and spaces do not matter');
});

t.test('location populations › cities, namesakes and the sums above them', async (t) => {
  const rows = [
    row('Austin,Texas,United States', 'City'),
    row('Austin,Minnesota,United States', 'City'),
    row('Dallas,Texas,United States', 'City'),
    row('Houston,Texas,United States', 'City'),
    row('Texas,United States', 'State'),
    row('New York,New York,United States', 'City'),
    row('Nowhere,Texas,United States', 'City'),
    row('United States', 'Country'),
  ];
  const places = [
    place('Austin', 'TX', 960_000),
    place('Austin', 'MN', 25_000),
    place('Dallas', 'TX', 1_300_000),
    place('Houston', 'TX', 2_300_000),
    place('New York City', 'NY', 8_300_000),
  ];
  const { population, stats } = joinPopulation(rows, places, new Map([['US|MN', 'Minnesota']]));
  t.same(
    population,
    [960_000, 25_000, 1_300_000, 2_300_000, 960_000 + 1_300_000 + 2_300_000, 8_300_000, 0, 12_885_000],
    'each Austin gets its own (Texas learned from Dallas and Houston, Minnesota given), "New York City" is New York, a state sums its cities and the country all of them, a place not found has 0',
  );
  t.match(stats, { cities: 6, matched: 5 }, 'six city rows, five matched');
  t.ok(stats.regionsLearned >= 2, 'the region codes it knows: the given one and the ones learned');
});

t.test('location populations › one coincidence never names a region', async (t) => {
  const rows = [row('Springfield,Illinois,United States', 'City'), row('Springfield,Missouri,United States', 'City')];
  const { population, stats } = joinPopulation(rows, [
    place('Springfield', 'IL', 114_000),
    place('Springfield', 'MO', 169_000),
  ]);
  t.same(population, [0, 0], 'two namesakes and no region learned: neither is guessed');
  t.equal(stats.ambiguous, 2, 'both counted as ambiguous');
});
