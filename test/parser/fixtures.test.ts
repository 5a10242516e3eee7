import t from 'tap';
import { ParsedSerp } from '../../contracts/result.js';
import { parse } from '../../parser/index.js';
import { fixturesMissing, listSerpPages, readFixtureText } from '../support/fixtures.js';
import { compatOf, normLink } from './compare.js';
import { expectationFor } from './expected.js';

const missing = fixturesMissing();
const pages = missing ? [] : listSerpPages();

t.test('Google SERP parser › every fixture page', { skip: missing }, async (t) => {
  for (const page of pages) {
    t.test(page, async (t) => {
      const html = readFixtureText(page);
      const out = parse(html, { captureAio: true });
      // Where the other parser is wrong, expected.ts (CORRECTIONS) holds the right answer and says why.
      const e = expectationFor(page);
      if (e?.corrected) t.comment(`expectation corrected: ${e.corrected}`);
      if (e?.kind) t.equal(out.kind, e.kind, 'page kind');
      if (out.kind !== 'serp') {
        t.ok(out.detail.length > 0, 'an interstitial says what it is');
        return;
      }
      const serp = out.serp;
      t.ok(ParsedSerp.safeParse(serp).success, 'matches the ParsedSerp contract');
      t.same(
        serp.organic_results.map((r) => r.position),
        serp.organic_results.map((_, i) => i + 1),
        'positions run 1..N',
      );
      const links = serp.organic_results.map((r) => r.link ?? '');
      t.equal(new Set(links).size, links.length, 'no link twice');
      t.ok(
        links.every((l) => /^https?:\/\//.test(l) && !/^https?:\/\/www\.google\.[a-z.]+\/url\?/.test(l)),
        'links are absolute and unwrapped',
      );
      t.ok(
        serp.organic_results.every((r) => r.title.trim() === r.title && r.title.length > 0),
        'titles are trimmed text',
      );
      const compat = compatOf(serp, { q: 'q' });
      t.ok(Array.isArray(compat.organic_results), 'maps onto the compat envelope');
      // Only a news-tab page (its expectation says so; search-navigator's 20250615-news page is the one fixture)
      // lists articles, and it lists them as news_results, never as organic results.
      const news = serp.serp_features.news_results as Array<Record<string, unknown>> | undefined;
      t.equal(news !== undefined, e?.newsCount !== undefined, `news_results ${news ? 'present' : 'absent'}`);
      if (news) {
        t.same(
          news.map((r) => r.position),
          news.map((_, i) => i + 1),
          'news positions run 1..N',
        );
        t.ok(
          news.every((r) => typeof r.title === 'string' && r.title && /^https?:\/\//.test(String(r.link))),
          'each article has a title and an absolute link',
        );
        t.same(compat.news_results, news, 'compat reports the articles as top-level news_results');
      }
      if (!e) return;
      if (e.newsCount !== undefined) t.equal(news?.length, e.newsCount, 'news article count');
      if (e.organicLinks) {
        t.same(links.map(normLink), e.organicLinks.map(normLink), 'organic links and order as the other parser');
      }
      if (e.organicCount !== undefined) t.equal(serp.organic_results.length, e.organicCount, 'organic count');
      for (const a of e.organicAt ?? []) {
        const r = serp.organic_results[a.index];
        if (a.link) t.equal(normLink(r?.link ?? ''), normLink(a.link), `link of result ${a.index}`);
        if (a.title) t.equal(r?.title, a.title, `title of result ${a.index}`);
      }
      if (e.totalResults !== undefined) t.equal(serp.information.total_results, e.totalResults, 'result estimate');
      if (e.timeTaken !== undefined) t.equal(serp.information.time_taken_displayed, e.timeTaken, 'time taken');
      for (const [name, present] of Object.entries(e.features ?? {})) {
        const found = name === 'ai_overview' ? serp.ai_overview !== undefined : name in serp.serp_features;
        t.equal(found, present, `${name} ${present ? 'present' : 'absent'}`);
      }
    });
  }
});
