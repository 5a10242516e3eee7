import t from 'tap';
import { rankChart } from '../../services/cli/rankChart.js';

/** `serp-api monitors history --chart` (docs/cli.md): positions over time in a terminal, one letter per domain. */
t.test('rank chart › positions, misses and failures', async (t) => {
  const chart = rankChart(
    [
      { label: 'example.com', values: [1, 2, 'not_ranked', 'failed'] },
      { label: 'other.org', values: [3, 2, 3, undefined] },
    ],
    ['2026-12-01', '2026-12-02', '2026-12-03', '2026-12-04'],
  );
  t.equal(
    chart,
    [
      '   1 ┤A   ',
      '   2 ┤ *  ',
      '   3 ┤B B ',
      ' n/r ┤  · ',
      'fail ┤   x',
      '      └────',
      '       2026-12-01 2026-12-04',
      'A example.com   B other.org   (* several)',
    ].join('\n'),
    'position 1 on top, two domains at one place a star, not ranked and failed on rows of their own',
  );
});

t.test('rank chart › tall ranges and empty histories', async (t) => {
  const chart = rankChart([{ label: 'a.com', values: [1, 50, 100] }], ['d1', 'd2', 'd3'], 5).split('\n');
  t.equal(chart.filter((l) => l.includes('┤')).length, 7, 'positions 1 to 100 in five rows, plus n/r and fail');
  t.match(chart[0], /^ {3}1 ┤A/, 'the best position on the top row');
  t.match(chart[4], /^ +\d+ ┤ {2}A/, 'the worst on the bottom row');
  t.equal(rankChart([], []), 'no history yet', 'nothing searched yet');
  const wide = rankChart(
    [{ label: 'a.com', values: Array.from({ length: 150 }, () => 4) }],
    Array.from({ length: 150 }, (_, i) => `c${i}`),
  );
  t.match(wide, /└─{100}\n/, 'at most the last 100 searches');
});
