import t from 'tap';
import type { ParsedSerp } from '../../contracts/result.js';
import { assembleRawHtml, mergePages, parseRaw } from '../../parser/index.js';
import { fixturesMissing, readFixtureText } from '../support/fixtures.js';
import { compatOf, serpOfHtml as serpOf } from './compare.js';

const NEWS_PAGE = 'serp/search-navigator/20250615-news-schloss-johannisberg-tokyo.html.gz';
const WEB_PAGE = 'serp/websearcher/2026-02-06_why-is-the-sky-blue_c9ab650f5bda.html.gz';

type News = Array<Record<string, unknown>>;
const newsOf = (serp: ParsedSerp): News | undefined => serp.serp_features.news_results as News | undefined;

t.test('news tab › the articles are news_results, not organic results', { skip: fixturesMissing() }, async (t) => {
  const serp = serpOf(readFixtureText(NEWS_PAGE));
  t.same(serp.organic_results, [], 'no organic results');
  const news = newsOf(serp) ?? [];
  t.equal(news.length, 10, 'ten articles, as search-navigator counts');
  t.match(news[0], {
    position: 1,
    title: 'Henkell Freixenet launches wine finder activation at Frankfurt Airport',
    link: 'https://www.dfnionline.com/brand-news/henkell-freixenet-launches-wine-finder-activation-at-frankfurt-airport-13-06-2025/',
    source: 'DFNI',
    date: '1 day ago',
    snippet: /^In partnership with Gebr\. Heinemann, the digital interactive activation/,
    thumbnail: /^data:image\/jpeg;base64,/,
  });
  t.match(news[9], { position: 10, source: 'Falstaff', date: 'Apr 10, 2025' });
  t.ok(
    news.every((n) => n.title && n.link && n.source && n.date && n.snippet && n.thumbnail),
    'every card has all seven fields',
  );
  t.equal(serp.information.organic_results_state, 'Results for exact spelling', 'a news page is not "Fully empty"');
  const pagination = serp.serp_features.pagination as { next?: string };
  t.match(pagination.next, /^https:\/\/www\.google\.com\/search\?q=schloss/, 'absolute links are not prefixed twice');
});

t.test('news tab › how the page kind is decided', { skip: fixturesMissing() }, async (t) => {
  const html = readFixtureText(NEWS_PAGE);
  // Without Google's page links (a one-page list), the news cards alone in the results column say it.
  const onePage = html.replace(/role=navigation/g, 'role=none').replace(/id=pnnext/g, 'id=none');
  t.equal(newsOf(serpOf(onePage))?.length, 10, 'by its news cards when no page link carries tbm=nws');
  t.equal(newsOf(serpOf(html, { tbm: 'nws' }))?.length, 10, 'the request’s tbm');
  t.equal(
    newsOf(serpOf(html, { finalUrl: 'https://www.google.com/search?q=schloss+johannisberg&tbm=nws' }))?.length,
    10,
    'the tbm of the final URL',
  );
  const asked = serpOf(html, { tbm: 'vid' });
  t.notOk(newsOf(asked), 'a request for another tab wins over the markup');
  t.equal(asked.organic_results.length, 10, 'and its links are read as results');
  const web = serpOf(readFixtureText(WEB_PAGE));
  t.notOk(newsOf(web), 'a web page with a top-stories carousel of news cards is no news tab');
  t.ok(web.organic_results.length > 0);
  const raw = assembleRawHtml([
    { start: 0, url: 'https://www.google.com/search?q=x&tbm=nws', fetchedAt: 'f', html: onePage },
  ]);
  const reparsed = parseRaw(raw, { captureAio: false });
  t.ok(reparsed.kind === 'serp' && newsOf(reparsed.serp)?.length === 10, 'a re-parse learns tbm from the stored URL');
});

t.test('mergePages › news articles continue 1..N across pages, a repeat kept once', async (t) => {
  const page = (links: string[]): ParsedSerp => ({
    organic_results: [],
    serp_features: { news_results: links.map((link, i) => ({ position: i + 1, title: link, link })) },
    information: {},
  });
  const merged = mergePages([
    { start: 10, serp: page(['https://c', 'https://a']) },
    { start: 0, serp: page(['https://a', 'https://b']) },
  ]);
  t.same(
    (merged.serp_features.news_results as News).map((n) => [n.position, n.link]),
    [
      [1, 'https://a'],
      [2, 'https://b'],
      [3, 'https://c'],
    ],
  );
  const compat = compatOf(merged, { keyword: 'q', tbm: 'nws' });
  t.same(compat.news_results, merged.serp_features.news_results, 'compat: top-level news_results');
});
