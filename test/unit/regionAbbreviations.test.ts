import t from 'tap';
import { REGION_ABBREVIATIONS, regionNamesByAbbreviation } from '../../services/geo/regions.js';

/**
 * The abbreviations places are written with (docs/locations.md#what-location-accepts): "Austin, TX" and
 * "Toronto, ON" name a region by its postal abbreviation, which the resolver reads as the region's name.
 */
t.test('region abbreviations', async (t) => {
  const names = regionNamesByAbbreviation();
  t.ok(names.get('US|tx')?.includes('texas'), 'TX is Texas');
  t.ok(names.get('CA|on')?.includes('ontario'), 'ON is Ontario');
  t.ok(names.get('AU|nsw')?.includes('new south wales'), 'NSW is New South Wales');
  t.equal(names.get('US|on'), undefined, 'an abbreviation belongs to its country: ON is no US state');
  t.equal(
    REGION_ABBREVIATIONS.filter((r) => r.country === 'US' && r.short.length === 2).length >= 50,
    true,
    'every US state is there',
  );
});
