import t from 'tap';
import { SearchRequest } from '../../contracts/search.js';
import { cacheKeyOf } from '../../services/application/searches.js';

const key = (body: Record<string, unknown>) => cacheKeyOf(SearchRequest.parse(body));

t.test('cache key › one key for one question to Google', async (t) => {
  const base = key({ keyword: 'coffee', location: 'Austin, Texas, United States' });
  t.equal(
    key({ keyword: '  coffee ', location: 'austin,texas,  united states' }),
    base,
    'spacing and case of the place',
  );
  t.equal(key({ keyword: 'coffee', location: 'Austin, Texas, United States', no_cache: true }), base, 'no_cache');
  t.equal(key({ keyword: 'coffee', location: 'Austin, Texas, United States', device: 'desktop' }), base, 'defaults');
  t.not(key({ keyword: 'Coffee', location: 'Austin, Texas, United States' }), base, 'the keyword’s case is Google’s');
  t.not(key({ keyword: 'coffee', location: 'Austin, Texas, United States', device: 'mobile' }), base, 'device');
  t.not(key({ keyword: 'coffee', location: 'Dallas, Texas, United States' }), base, 'another place');
  t.not(key({ keyword: 'coffee' }), base, 'no place');
});
