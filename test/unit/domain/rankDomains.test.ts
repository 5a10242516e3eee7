import t from 'tap';
import { ParsedSerp } from '../../../contracts/result.js';
import { domainMatcher, rankDomains } from '../../../domain/monitor/ranking.js';

/**
 * Where a tracked domain ranks in one search (docs/rank-tracking.md): which URLs a pattern owns, its best organic
 * position within the monitor's depth, and the features that cite it.
 */
t.test('rank tracking › which URLs a domain pattern owns', async (t) => {
  const plain = domainMatcher('example.com');
  t.ok(plain('https://example.com/a'), 'the host itself');
  t.ok(plain('https://www.example.com/a'), 'and its www');
  t.notOk(plain('https://shop.example.com/a'), 'not another subdomain');
  t.notOk(plain('https://notexample.com/'), 'not a host that only ends the same');
  t.notOk(plain('not a url'), 'not text that is no URL');
  const wild = domainMatcher('*.example.com');
  t.ok(wild('https://shop.example.com/a') && wild('https://a.b.example.com/'), 'a wildcard owns every subdomain');
  t.ok(wild('https://example.com/'), 'and the domain itself');
  const blog = domainMatcher('example.com/blog/');
  t.ok(blog('https://www.example.com/Blog/post'), 'a path owns the URLs under it, in any case');
  t.notOk(blog('https://example.com/shop/'), 'and none beside it');
});

const serp = ParsedSerp.parse({
  organic_results: [
    { position: 1, title: 'Other', link: 'https://other.org/' },
    { position: 2, title: 'Shop', link: 'https://shop.example.com/p', sitelinks: [{ title: 'x' }] },
    { position: 3, title: 'Home', link: 'https://www.example.com/' },
    { position: 4, title: 'Again', link: 'https://example.com/again' },
    { position: 12, title: 'Deep', link: 'https://deep.net/' },
  ],
  serp_features: {
    answer_box: { link: 'https://example.com/answer', thumbnail: 'https://cited.net/thumb.png' },
    related_questions: [{ question: 'q', link: 'https://other.org/faq' }],
  },
  ai_overview: { text_blocks: [], references: [{ title: 'r', link: 'https://blog.example.com/ai' }] },
  information: {},
});

t.test('rank tracking › each tracked domain in one search', async (t) => {
  const [plain, wild, deep, absent] = rankDomains(serp, ['example.com', '*.example.com', 'deep.net', 'cited.net'], 10);
  t.same(
    plain,
    { domain: 'example.com', position: 3, url: 'https://www.example.com/', features: ['featured_snippet'] },
    'its best position, the URL there, and the featured snippet citing it',
  );
  t.same(
    wild,
    {
      domain: '*.example.com',
      position: 2,
      url: 'https://shop.example.com/p',
      features: ['ai_overview_citation', 'featured_snippet', 'sitelinks'],
    },
    'a subdomain’s result with sitelinks ranks the wildcard higher, and the AI overview cites it',
  );
  t.same(deep, { domain: 'deep.net', features: [] }, 'a result past the depth is not ranked');
  t.same(absent, { domain: 'cited.net', features: [] }, 'a thumbnail is no citation');
  t.same(rankDomains(serp, ['deep.net'], 20)[0].position, 12, 'a deeper monitor sees it');
});
