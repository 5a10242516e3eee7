import { parse } from 'csv-parse/sync';
import t from 'tap';
import type { RankHistoryDoc, StoredCheck } from '../../projections/rankHistory/rankHistory.js';
import { csvRows } from '../../services/cli/commands/batch.js';
import { csvChunks, csvRow, historyCsvOf } from '../../services/monitors/views/monitorReads.js';

/** Every export (docs/security.md#exports): a cell a spreadsheet would run as a formula is written as text. */
const FORMULAS = ['=1+1', '@SUM(A1:A9)', '+cmd|" /C calc"!A0', '-2+3', '\t=x', '\r=x'];
const ESCAPED = FORMULAS.map((f) => `'${f}`);

const readAll = async (stream: NodeJS.ReadableStream) => {
  let text = '';
  for await (const chunk of stream) text += String(chunk);
  return text;
};

t.test('the history CSV escapes formulas in keywords, domains, URLs and failures', async (t) => {
  const docs: RankHistoryDoc[] = FORMULAS.map((k) => ({
    m: 'mon_x',
    k,
    d: ['=evil.example', 'plain.example'],
    u: ['@https://a.example/', 'https://b.example/=x'],
    c: [],
  }));
  const checks: Array<[RankHistoryDoc, StoredCheck]> = docs.flatMap((doc) => [
    [
      doc,
      [
        Date.UTC(2026, 0, 1),
        'run_1',
        'job_1',
        '',
        [
          [0, 3, 0, 0],
          [1, 0, 1, 0],
        ],
      ],
    ] as [RankHistoryDoc, StoredCheck],
    [doc, [Date.UTC(2026, 0, 2), 'run_2', 'job_2', '-timeout', [[0, 0, -1, 0]]]] as [RankHistoryDoc, StoredCheck],
  ]);
  const csv = await readAll(historyCsvOf([checks]));
  const rows = parse(csv, { relax_quotes: true, columns: true }) as Array<Record<string, string>>;
  t.same([...new Set(rows.map((r) => r.keyword))], ESCAPED, 'every keyword starts with a quote mark');
  t.same([...new Set(rows.map((r) => r.domain))], ["'=evil.example", 'plain.example'], 'domains');
  t.same(
    [...new Set(rows.filter((r) => r.status !== 'failed').map((r) => r.url))],
    ["'@https://a.example/", 'https://b.example/=x'],
    'URLs (a formula sign inside a cell is left alone)',
  );
  t.same([...new Set(rows.filter((r) => r.status === 'failed').map((r) => r.failure))], ["'-timeout"], 'failures');
  t.same([...new Set(rows.map((r) => r.position))].sort(), ['', '3'], 'positions stay numbers');

  // the row writer for points (the JSON-to-CSV path) writes the same cells
  const line = csvRow({
    keyword: '=1+1',
    domain: 'a.example',
    checked_at: '2026-01-01T00:00:00.000Z',
    status: 'ranked',
    position: 1,
    url: '@x',
    failure: null,
    job_id: 'job_1',
  } as Parameters<typeof csvRow>[0]);
  t.equal(line, "'=1+1,a.example,2026-01-01T00:00:00.000Z,ranked,1,'@x,,job_1\n");
  const chunked = [...csvChunks([checks.slice(0, 1)])].join('');
  t.match(chunked, /^'=1\+1,'=evil\.example,/, 'the chunked writer too');
});

t.test('the batch CLI CSV escapes formulas in keywords, titles and links', async (t) => {
  const rows = parse(
    csvRows(
      '=1+1',
      FORMULAS.map((f, i) => ({ position: i + 1, title: f, link: `https://a.example/${i}` })),
    ),
    { relax_quotes: true },
  ) as string[][];
  t.same(
    rows.map((r) => r[0]),
    FORMULAS.map(() => "'=1+1"),
  );
  t.same(
    rows.map((r) => r[2]),
    ESCAPED,
  );
});
