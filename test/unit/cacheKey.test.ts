import t from 'tap';
import { SearchRequest } from '../../contracts/search.js';
import { cacheKeyOf, newJobId } from '../../services/searches/commands/searches.js';

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
  t.equal(
    key({ keyword: 'coffee', location: 'Austin, Texas, United States', depth: 10 }),
    base,
    'depth: a deeper cached result answers a shallower search, so both share the key',
  );
  t.not(key({ keyword: 'Coffee', location: 'Austin, Texas, United States' }), base, 'the keyword’s case is Google’s');
  t.not(key({ keyword: 'coffee', location: 'Austin, Texas, United States', device: 'mobile' }), base, 'device');
  t.not(key({ keyword: 'coffee', location: 'Dallas, Texas, United States' }), base, 'another place');
  t.not(key({ keyword: 'coffee' }), base, 'no place');
});

t.test(
  'newJobId › 24 hex characters, time first, and no two alike across many refills of its random pool',
  async (t) => {
    const at = Date.parse('2026-11-25T12:00:00.000Z');
    const ids = Array.from({ length: 5000 }, (_, i) => newJobId(at + Math.floor(i / 1000)));
    t.ok(
      ids.every((id) => /^[0-9a-f]{24}$/.test(id)),
      'SerpApi-shaped',
    );
    t.equal(new Set(ids).size, ids.length, '5,000 ids (~20 refills of the pool), all distinct');
    t.equal(new Set(ids.map((id) => id.slice(12))).size, ids.length, 'their random halves too');
    t.equal(ids[0].slice(0, 12), at.toString(16).padStart(12, '0'), 'the first half is the time in milliseconds');
    t.ok(
      ids.every((id, i) => i === 0 || id.slice(0, 12) >= ids[i - 1].slice(0, 12)),
      'ids sort by time',
    );
  },
);
