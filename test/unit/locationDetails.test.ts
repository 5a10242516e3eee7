import t from 'tap';
import { didYouMean, invalidUuleDetail, unknownLocationDetail } from '../../services/api/locationCheck.js';
import { createLocationResolver } from '../../services/geo/locations.js';
import { uuleForName } from '../../services/geo/uule.js';

/**
 * What a search with a place the service cannot use is told (docs/locations.md#what-location-accepts): the closest
 * places it knows, the forms that work, and why a `uule` was refused.
 */
const resolver = createLocationResolver();
// the lookup the /v1 routes build from the resolver
const lookup = {
  resolve: (name: string) => resolver.resolveLocation(name),
  suggest: (name: string, limit: number) => resolver.suggestLocations(name, limit),
};
t.teardown(() => resolver.close());

t.test('location details › an unknown place', async (t) => {
  const detail = unknownLocationDetail('Austinn, Texas', lookup);
  t.match(
    detail,
    /^unknown location "Austinn, Texas"\. Did you mean "Austin,Texas,United States", "Austin,Minnesota,United States", "Austin,Indiana,United States"\? /,
    'the three closest places, the largest first',
  );
  t.match(detail, /GET \/locations\.json\?q=… lists them\.$/, 'and where to find the rest');
  t.equal(didYouMean('zzzzqqqq', lookup), '', 'nothing close: no suggestion');
  t.equal(didYouMean('Austin', undefined), '', 'no resolver: no suggestion');
  t.match(unknownLocationDetail('x'.repeat(500), lookup), /"x{120}"\./, 'a long location is cut in the answer');
});

t.test('location details › a uule', async (t) => {
  t.equal(invalidUuleDetail(uuleForName('Austin,Texas,United States')), undefined, 'one that reads back is fine');
  t.match(
    invalidUuleDetail('w+@@@'),
    /^uule "w\+@@@" does not decode: .*Send `location` instead/,
    'one that does not is refused, with what to send',
  );
});
