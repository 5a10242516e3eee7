import type { ParsedSerp } from '../contracts/result.js';
import { type ParseContext, type ParseOutcome, parseWithRoot } from './parsePage.js';
import { blockOffsets, markSource, sourceOffset } from './sources.js';

/** What a mark stands for in the parser's output of the page (docs/screenshots.md#pixel-positions). */
export type PositionTarget =
  | { kind: 'organic'; index: number }
  | { kind: 'item'; feature: string; index: number }
  | { kind: 'feature'; feature: string }
  | { kind: 'ai_overview' }
  | { kind: 'block'; feature: string };

export interface PositionMark {
  /** the attribute added to the element's start tag (`data-serp-k3`): what the renderer looks the element up by */
  attribute: string;
  target: PositionTarget;
}

/** list features whose entries each have an element of their own; `places` is the local pack's list */
const itemsOf = (value: unknown): unknown[] | undefined => {
  if (Array.isArray(value)) return value;
  const places = value && typeof value === 'object' ? (value as { places?: unknown }).places : undefined;
  return Array.isArray(places) ? places : undefined;
};

/**
 * One page parsed, and the same page with each element the output was read from marked by an attribute of its own
 * (the parser records the elements as it reads them: parser/sources.ts). The renderer lays out `html` and measures
 * each mark's element; a result's rectangle is its element's, found by the element's place in the page.
 */
export const positionMarks = (
  page: string,
  context: ParseContext,
): { outcome: ParseOutcome; marks: PositionMark[]; html: string } => {
  const { outcome, root } = parseWithRoot(page, context);
  if (outcome.kind !== 'serp' || !root) return { outcome, marks: [], html: page };
  const serp: ParsedSerp = outcome.serp;
  const found: Array<{ offset: number; target: PositionTarget }> = [];
  const add = (value: unknown, target: PositionTarget) => {
    const offset = sourceOffset(value, page);
    if (offset !== undefined) found.push({ offset, target });
  };
  for (const [index, r] of serp.organic_results.entries()) add(r, { kind: 'organic', index });
  for (const [feature, value] of Object.entries(serp.serp_features)) {
    add(value, { kind: 'feature', feature });
    for (const [index, item] of (itemsOf(value) ?? []).entries()) add(item, { kind: 'item', feature, index });
  }
  if (serp.ai_overview) add(serp.ai_overview, { kind: 'ai_overview' });
  for (const b of blockOffsets(root, page))
    found.push({ offset: b.offset, target: { kind: 'block', feature: b.name } });
  const marks = found.map((f, i) => ({ offset: f.offset, attribute: `data-serp-k${i}`, target: f.target }));
  return {
    outcome,
    marks: marks.map(({ attribute, target }) => ({ attribute, target })),
    html: markSource(page, marks),
  };
};
