import t from 'tap';
import { COUNTRIES } from '../../services/geo/countries.js';
import { createLocationResolver } from '../../services/geo/locations.js';

/**
 * The countries the service knows before any `serp-api locations import` (docs/locations.md): each is the Google
 * geotarget of that country, with the criteria id and canonical name Google uses, so a search placed in a country
 * names it as Google does.
 */
t.test('countries › each the geotarget Google has for it', async (t) => {
  const resolver = createLocationResolver();
  t.teardown(() => resolver.close());
  const codes = Object.keys(COUNTRIES);
  t.ok(codes.length > 200, `${codes.length} countries`);
  const wrong = Object.entries(COUNTRIES).flatMap(([code, [id, name]]) => {
    const target = resolver.locationById(id);
    return target?.canonicalName === name && target.countryCode === code && target.targetType === 'Country'
      ? []
      : [`${code}: ${id} ${name} is ${target ? `${target.canonicalName} (${target.targetType})` : 'no geotarget'}`];
  });
  t.same(wrong, [], 'every id names that country in the shipped geotargets');
  t.match(resolver.resolveLocation('Germany'), { canonicalName: 'Germany', gl: 'de' }, 'a country by its name');
});
