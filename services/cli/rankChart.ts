/**
 * A small text chart of positions over time for a terminal (`serp-api monitors history`): one column per search,
 * position 1 at the top, one letter per domain, `x` under a search that failed (a gap, never a position), `·` at the
 * bottom where a domain was searched but not ranked. Rows are buckets of positions when the range is taller than
 * `height`.
 */
export interface ChartSeries {
  label: string;
  /** per column: a position, 'not_ranked' or 'failed' (undefined: no point) */
  values: Array<number | 'not_ranked' | 'failed' | undefined>;
}

export const rankChart = (series: ChartSeries[], columns: string[], height = 12): string => {
  const positions = series.flatMap((s) => s.values.filter((v): v is number => typeof v === 'number'));
  if (columns.length === 0) return 'no history yet';
  const top = positions.length ? Math.min(...positions) : 1;
  const bottom = positions.length ? Math.max(...positions) : 1;
  const rows = Math.max(1, Math.min(height, bottom - top + 1));
  const step = (bottom - top + 1) / rows;
  const rowOf = (p: number) => Math.min(rows - 1, Math.floor((p - top) / step));
  const width = Math.min(columns.length, 100);
  const cols = columns.slice(-width);
  const grid = Array.from({ length: rows + 2 }, () => Array.from({ length: width }, () => ' '));
  const letters = series.map((_, i) => String.fromCharCode(65 + (i % 26)));
  series.forEach((s, i) => {
    s.values.slice(-width).forEach((v, x) => {
      if (typeof v === 'number') grid[rowOf(v)][x] = grid[rowOf(v)][x] === ' ' ? letters[i] : '*';
      else if (v === 'not_ranked' && grid[rows][x] === ' ') grid[rows][x] = '·';
      else if (v === 'failed') grid[rows + 1][x] = 'x';
    });
  });
  const label = (r: number) => String(Math.round(top + r * step)).padStart(4);
  const lines = grid.map((row, r) => {
    const axis = r < rows ? `${label(r)} ┤` : r === rows ? ' n/r ┤' : 'fail ┤';
    return `${axis.padStart(6)}${row.join('')}`;
  });
  lines.push(`      └${'─'.repeat(width)}`);
  lines.push(
    `       ${cols[0]?.slice(0, 10) ?? ''}${' '.repeat(Math.max(1, width - 20))}${cols[cols.length - 1]?.slice(0, 10) ?? ''}`,
  );
  lines.push(series.map((s, i) => `${letters[i]} ${s.label}`).join('   ') + (positions.length ? '   (* several)' : ''));
  return lines.join('\n');
};
