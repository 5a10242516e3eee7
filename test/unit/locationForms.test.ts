import t from 'tap';
import { createLocationResolver } from '../../services/geo/locations.js';

/**
 * One resolver for every surface (docs/locations.md): the forms people and clients write a location in, all to one
 * geotarget, and the most populous place where a name is ambiguous. Populations come from the GeoNames table joined
 * into the shipped data at build time (scripts/build-locations.ts).
 */
const resolver = createLocationResolver();
const canonical = (name: string) => resolver.resolveLocation(name)?.canonicalName;

t.teardown(() => resolver.close());

t.test('every form of Austin, Texas resolves to it', async (t) => {
  for (const form of [
    'Austin,Texas,United States',
    'Austin, Texas, United States',
    '  austin ,TEXAS,   united states ',
    'Austin, Texas',
    'Austin, TX',
    'Austin,TX',
    'Austin, TX, USA',
    'Austin,United States',
    'Austin, US',
    'Austin',
    '1026201',
  ]) {
    t.equal(canonical(form), 'Austin,Texas,United States', form);
  }
  const austin = resolver.resolveLocation('Austin, TX');
  t.match(
    austin,
    { countryCode: 'US', gl: 'us', hl: 'en', uule: /^w\+CAIQICI/ },
    'targeting as for the canonical name',
  );
});

t.test('ambiguous names: the most populous place first', async (t) => {
  t.equal(canonical('London'), 'London,England,United Kingdom');
  t.equal(canonical('Paris'), 'Paris,Paris,Ile-de-France,France');
  t.equal(canonical('Springfield'), 'Springfield,Missouri,United States');
  t.equal(canonical('Texas'), 'Texas,United States', 'the state before the towns named after it');
  // the rest of the name decides among the places of that name
  t.equal(canonical('London, Ontario'), 'London,Ontario,Canada');
  t.equal(canonical('London, ON'), 'London,Ontario,Canada', 'a Canadian province by its abbreviation');
  t.equal(canonical('London, UK'), 'London,England,United Kingdom');
  t.equal(canonical('Paris, TX'), 'Paris,Texas,United States');
  t.equal(canonical('Paris, France'), 'Paris,Paris,Ile-de-France,France');
  t.equal(canonical('Los Angeles, CA'), 'Los Angeles,California,United States', 'CA: California in the US');
  t.equal(canonical('Toronto, CA'), 'Toronto,Ontario,Canada', 'CA: Canada for a Canadian city');
  t.equal(canonical('New York, NY'), 'New York,New York,United States');
  t.equal(canonical('Sydney, NSW'), 'Sydney,New South Wales,Australia');
  t.equal(canonical('Munich, Germany'), 'Munich,Bavaria,Germany');
  t.equal(canonical('Germany'), 'Germany');
});

t.test('what does not resolve, and what comes close', async (t) => {
  for (const name of ['Nowhere, Texas', 'Austin, Ontario', 'Austin, XX', '', '   ', ',', '99999999999', 'TX']) {
    t.equal(canonical(name), undefined, JSON.stringify(name));
  }
  t.same(
    resolver.suggestLocations('Austn, Texas', 3)[0],
    'Austin,Texas,United States',
    'one typo away: the place it meant, first',
  );
  t.ok(resolver.suggestLocations('Nowhere, Texas', 3).includes('Texas,United States'), 'the part that is a place');
  t.same(resolver.suggestLocations('qqqqzzzz', 3), [], 'nothing close: nothing offered');
});

t.test('search: the largest place of a name first, and without a query the largest places', async (t) => {
  t.same(
    resolver.searchLocations('Austin', 3).map((l) => l.canonicalName),
    ['Austin,Texas,United States', 'Austin,Minnesota,United States', 'Austin,Indiana,United States'],
  );
  t.equal(resolver.searchLocations('London', 1)[0]?.canonicalName, 'London,England,United Kingdom');
  const largest = resolver.searchLocations('', 3);
  t.equal(largest.length, 3);
  t.ok(
    largest.every((l, i) => i === 0 || l.population <= largest[i - 1]!.population),
    'largest first',
  );
  t.ok(
    largest.every((l) => l.targetType === 'Country'),
    `countries: ${largest.map((l) => l.canonicalName)}`,
  );
  const austin = resolver.searchLocations('Austin', 1)[0];
  t.ok(austin && austin.population > 900_000, `Austin's population (${austin?.population})`);
});
