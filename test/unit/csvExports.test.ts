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
  t.equal(line, "'=1+1,a.example,2026-01-01T00:00:00.000Z,ranked,1,'@x,,job_1,,\n");
  const chunked = [...csvChunks([checks.slice(0, 1)])].join('');
  t.match(chunked, /^'=1\+1,'=evil\.example,/, 'the chunked writer too');
});

t.test('the history CSV appends the fold: pixels_from_top and above_the_fold, empty where not measured', async (t) => {
  const doc: RankHistoryDoc = {
    m: 'mon_x',
    k: 'fold',
    d: ['a.example', 'b.example'],
    u: ['https://a.example/'],
    c: [],
  };
  const checks: Array<[RankHistoryDoc, StoredCheck]> = [
    // before the monitor measured pixels
    [doc, [Date.UTC(2026, 0, 1), 'run_1', 'job_1', '', [[0, 1, 0, 0]]]],
    // measured: a.example first at 641 px on the first screen; b.example not ranked (not on the first page)
    [
      doc,
      [
        Date.UTC(2026, 0, 2),
        'run_2',
        'job_2',
        '',
        [
          [0, 1, 0, 0, 641, 1],
          [1, 0, -1, 0, -1, 0],
        ],
      ],
    ],
    // measured, below the fold
    [doc, [Date.UTC(2026, 0, 3), 'run_3', 'job_3', '', [[0, 6, 0, 0, 2192, 0]]]],
    // a failed search says nothing of the fold
    [doc, [Date.UTC(2026, 0, 4), 'run_4', 'job_4', 'captcha', [[0, 0, -1, 0]]]],
  ];
  const csv = await readAll(historyCsvOf([checks]));
  t.equal(
    csv.split('\n')[0],
    'keyword,domain,checked_at,status,position,url,failure,job_id,pixels_from_top,above_the_fold',
    "the older columns in their order, the fold's appended",
  );
  const rows = parse(csv, { columns: true }) as Array<Record<string, string>>;
  t.same(
    rows.map((r) => [r.job_id, r.domain, r.position, r.pixels_from_top, r.above_the_fold]),
    [
      ['job_1', 'a.example', '1', '', ''],
      ['job_2', 'a.example', '1', '641', 'true'],
      ['job_2', 'b.example', '', '', 'false'],
      ['job_3', 'a.example', '6', '2192', 'false'],
      ['job_4', 'a.example', '', '', ''],
    ],
    'measured rows carry the fold, the others leave it empty',
  );
  const fromPoints = [
    { job_id: 'job_1', position: 1 },
    { job_id: 'job_2', position: 1, pixels_from_top: 641, above_the_fold: true },
    { job_id: 'job_2', position: null, status: 'not_ranked', pixels_from_top: null, above_the_fold: false },
  ].map((p) =>
    csvRow({
      keyword: 'k',
      domain: 'a.example',
      checked_at: '2026-01-01T00:00:00.000Z',
      status: 'ranked',
      url: null,
      failure: null,
      features: [],
      run_id: 'run',
      ...p,
    } as Parameters<typeof csvRow>[0]),
  );
  t.same(
    fromPoints.map((l) => l.trimEnd().split(',').slice(-2)),
    [
      ['', ''],
      ['641', 'true'],
      ['', 'false'],
    ],
    'the row writer for points writes the same cells',
  );
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
