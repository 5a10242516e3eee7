import t from 'tap';
import { isWrongPlace, misplacedOn } from '../../../domain/location/placement.js';

/**
 * Which verdicts mean Google searched from the wrong place (docs/locations.md#the-check), and which route's page ended
 * a search placed elsewhere: what a partial result's `location_mismatch` note names.
 */
t.test('location placement › wrong places', async (t) => {
  t.same(
    (['matched', 'mismatched', 'region_only', 'country_only', 'unverified', undefined] as const).map(isWrongPlace),
    [false, true, true, true, false, false],
    'elsewhere, or only the region or the country, is wrong; matched, unverified or unchecked is not',
  );
});

t.test('location placement › the route a misplaced search ended on', async (t) => {
  const check = (
    status: 'matched' | 'mismatched',
    placements: [string, 'matched' | 'mismatched' | 'region_only'][],
  ) => ({
    status,
    retries: placements.length - 1,
    placements: placements.map(([route, s], i) => ({ route, start: i * 10, status: s })),
  });
  t.equal(
    misplacedOn(
      check('mismatched', [
        ['proxy-1', 'mismatched'],
        ['proxy-2', 'region_only'],
        ['proxy-2', 'matched'],
      ]),
    ),
    'proxy-2',
    'the last route judged wrong, the retry’s',
  );
  t.equal(
    misplacedOn(
      check('matched', [
        ['proxy-1', 'mismatched'],
        ['proxy-3', 'matched'],
      ]),
    ),
    undefined,
    'a search the retry placed right was not misplaced',
  );
  t.equal(misplacedOn(undefined), undefined, 'a search that asked for no place');
});
