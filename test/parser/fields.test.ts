import t from 'tap';
import { parse } from '../../parser/index.js';
import { fixturesMissing, listSerpPages, readFixtureText } from '../support/fixtures.js';
import { checkField, dateKey, expectationFor, hostOf, normText } from './expected.js';

const missing = fixturesMissing();
const pages = missing ? [] : listSerpPages().filter((p) => expectationFor(p)?.fields?.length);

t.test('Field comparison › normalises only what parsers differ on without meaning to', async (t) => {
  t.equal(normText('ready\u00a0…'), 'ready', 'a trailing ellipsis, either form, and its space');
  t.equal(normText('a  b\n c'), 'a b c', 'whitespace runs');
  t.equal(normText('\u200eVälj matkasse'), 'Välj matkasse', 'direction marks');
  t.not(normText('abc'), normText('abd'), 'the words themselves still count');
  t.equal(
    hostOf('https://www.whitehouse.gov › about-the-white-house'),
    'whitehouse.gov',
    'a breadcrumb names its host',
  );
  t.equal(hostOf('www.testin.se › Hem & Hushåll'), 'testin.se', 'with or without the scheme');
  t.equal(hostOf('maps.google.com'), 'maps.google.com', 'a bare host');
  t.equal(hostOf('Evian › en_us › the-evian-story'), 'evian', 'a site name in place of the host: its first word');
  t.equal(dateKey('Nov 8, 2023'), '2023-11-08', 'English dates');
  t.equal(dateKey('29 apr. 2024'), '2024-04-29', 'Swedish dates');
  t.equal(dateKey('2023-11-08'), '2023-11-08', 'ISO dates');
  t.equal(dateKey('3 days ago'), '3 days ago', 'relative dates stay as shown');
});

/**
 * Per-result fields (snippet, displayed host, date, rating, sitelinks) where another parser's expected output pins
 * them (test/parser/expected.ts). Where that parser is shown wrong by the page, FIELD_CORRECTIONS holds the right
 * value and says why; those are asserted as corrected.
 */
t.test('Google SERP parser › per-result fields as other parsers pin them', { skip: missing }, async (t) => {
  t.ok(pages.length > 0, 'some fixture pages pin per-result fields');
  for (const page of pages) {
    t.test(page, async (t) => {
      const e = expectationFor(page);
      const out = parse(readFixtureText(page), { captureAio: false });
      t.equal(out.kind, 'serp', 'a result page');
      if (out.kind !== 'serp' || !e?.fields) return;
      for (const why of e.fieldsCorrected ?? []) t.comment(`corrected: ${why}`);
      for (const pin of e.fields) {
        const c = checkField(out.serp.organic_results, pin);
        t.ok(c.ok, `${pin.field} of ${pin.link ?? `result ${pin.index}`}`, { got: c.got, want: c.want });
      }
    });
  }
});
