import type { CompactResult } from '../../contracts/mcp.js';

/**
 * The compact view of a result for agents (docs/mcp.md#behaviour): what a model reasons with (positions, titles, links,
 * snippets, the AI Overview's text and sources, each feature in a line or two) without thumbnails, favicons, tracking
 * links, sitelinks or rich-snippet internals. Works on a native body (`serp_features`) and a compat body (features at
 * the top level) alike.
 */

type Obj = Record<string, unknown>;

/** compat envelope members and native blocks that are not SERP features */
const NOT_FEATURES = new Set([
  'search_metadata',
  'search_parameters',
  'search_information',
  'organic_results',
  'ai_overview',
  'serpapi_pagination',
  'pagination',
  'error',
]);
/** features that only repeat what the query or the pager says */
const SKIPPED_FEATURES = new Set(['pagination', 'serpapi_pagination']);
const MAX_LINES_PER_FEATURE = 10;
const MAX_LINE = 300;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() ? v.trim() : undefined);
/** a data: URI or other inline blob is never worth a token, nor a highlight fragment (`#:~:text=…`) */
const usableLink = (v: unknown) => {
  const s = str(v);
  return s && /^https?:\/\//.test(s) ? s.replace(/#:~:text=.*$/, '') : undefined;
};
const clip = (s: string, max = MAX_LINE) => (s.length > max ? `${s.slice(0, max - 1)}…` : s);

const organic = (r: Obj): CompactResult['organic_results'][number] => {
  const out: CompactResult['organic_results'][number] = {
    position: typeof r.position === 'number' ? r.position : 0,
    title: str(r.title) ?? '',
  };
  const link = usableLink(r.link);
  if (link) out.link = link;
  const source = str(r.source);
  if (source) out.source = source;
  const snippet = str(r.snippet);
  if (snippet) out.snippet = snippet;
  const date = str(r.date);
  if (date) out.date = date;
  return out;
};

const blockText = (block: Obj): string[] => {
  const lines: string[] = [];
  const snippet = str(block.snippet);
  if (block.type === 'heading' && snippet) lines.push(`## ${snippet}`);
  else if (snippet) lines.push(snippet);
  if (Array.isArray(block.list)) {
    for (const item of block.list) {
      if (!isObj(item)) continue;
      const title = str(item.title);
      const text = str(item.snippet);
      if (title || text) lines.push(`- ${[title, text].filter(Boolean).join(': ')}`);
    }
  }
  return lines;
};

const aiOverview = (aio: unknown): CompactResult['ai_overview'] => {
  if (!isObj(aio)) return undefined;
  const blocks = Array.isArray(aio.text_blocks) ? aio.text_blocks.filter(isObj) : [];
  const text = blocks.flatMap(blockText).join('\n');
  const references = (Array.isArray(aio.references) ? aio.references.filter(isObj) : []).map((r, i) => {
    const ref: { index: number; title: string; link?: string } = {
      index: typeof r.index === 'number' ? r.index : i,
      title: str(r.title) ?? str(r.source) ?? '',
    };
    const link = usableLink(r.link);
    if (link) ref.link = link;
    return ref;
  });
  if (!text && !references.length) return undefined;
  return { text, references };
};

/** One line for an item of a feature: its question, title or query, a source, and its link. */
const itemLine = (item: unknown): string | undefined => {
  const s = str(item);
  if (s) return clip(s);
  if (!isObj(item)) return undefined;
  const head =
    str(item.question) ?? str(item.topic) ?? str(item.title) ?? str(item.query) ?? str(item.name) ?? str(item.text);
  if (!head) return undefined;
  const source = str(item.source) ?? (isObj(item.source) ? str(item.source.name) : undefined);
  // a question's answer; a buying guide topic's summary
  const answer = item.question
    ? (str(item.snippet) ?? str(item.answer))
    : item.topic
      ? (str(item.summary) ?? str(item.snippet))
      : undefined;
  const link = usableLink(item.link);
  return clip(
    [head, source && source !== head ? `(${source})` : '', answer ? `: ${answer}` : '', link ? ` ${link}` : '']
      .filter(Boolean)
      .join(' ')
      .replace(/ :/g, ':'),
  );
};

/** A block feature (answer box, knowledge graph): its headline fields, each a line. */
const blockLines = (block: Obj): string[] => {
  const lines: string[] = [];
  for (const key of ['title', 'type', 'answer', 'result', 'snippet', 'description', 'address', 'phone', 'rating']) {
    const v = block[key];
    const s = typeof v === 'number' ? String(v) : str(v);
    if (s) lines.push(clip(`${key}: ${s}`));
  }
  const link = usableLink(block.link) ?? usableLink(block.website);
  if (link) lines.push(`link: ${link}`);
  for (const key of ['list', 'topics', 'people_also_search_for', 'places', 'local_results', 'organic_results']) {
    const items = block[key];
    if (Array.isArray(items))
      for (const i of items.slice(0, 5))
        lines.push(...[itemLine(i)].filter((l) => l !== undefined).map((l) => `- ${l}`));
  }
  return lines;
};

const featureLines = (value: unknown): string[] => {
  if (Array.isArray(value))
    return value
      .map(itemLine)
      .filter((l): l is string => l !== undefined)
      .slice(0, MAX_LINES_PER_FEATURE);
  if (isObj(value)) return blockLines(value).slice(0, MAX_LINES_PER_FEATURE);
  const s = str(value);
  return s ? [clip(s)] : [];
};

/** filter chips: their names say how the search can be narrowed (their links are long Google tracking URLs) */
const filterLines = (value: unknown): string[] => {
  const names = (Array.isArray(value) ? value : []).map((f) => (isObj(f) ? str(f.name) : undefined)).filter(Boolean);
  return names.length ? [names.join(', ')] : [];
};

const featuresOf = (body: Obj): Obj => {
  if (isObj(body.serp_features)) return body.serp_features;
  return Object.fromEntries(Object.entries(body).filter(([k]) => !NOT_FEATURES.has(k)));
};

/** The compact view of a native (`output=json`) or compat (`output=compat`) result body. */
export const compactResult = (body: Obj): CompactResult => {
  const meta = isObj(body.search_metadata) ? body.search_metadata : {};
  const params = isObj(meta.parameters) ? meta.parameters : isObj(body.search_parameters) ? body.search_parameters : {};
  const info = isObj(meta.information)
    ? meta.information
    : isObj(body.search_information)
      ? body.search_information
      : {};
  const out: CompactResult = {
    organic_results: (Array.isArray(body.organic_results) ? body.organic_results.filter(isObj) : []).map(organic),
    features: {},
  };
  const keyword = str(params.keyword) ?? str(params.q);
  if (keyword) out.keyword = keyword;
  if (isObj(meta.targeting)) out.targeting = meta.targeting;
  if (typeof info.total_results === 'number') out.total_results = info.total_results;
  if (typeof meta.pages_fetched === 'number') out.pages_fetched = meta.pages_fetched;
  const aio = aiOverview(body.ai_overview);
  if (aio) out.ai_overview = aio;
  for (const [name, value] of Object.entries(featuresOf(body))) {
    if (SKIPPED_FEATURES.has(name)) continue;
    const lines = name === 'filters' ? filterLines(value) : featureLines(value);
    if (lines.length) out.features[name] = lines;
  }
  return out;
};

/**
 * The compact view as text for a model: a few hundred lines at most, sources numbered as the AI Overview cites them.
 */
export const compactText = (c: CompactResult): string => {
  const lines: string[] = [];
  if (c.ai_overview) {
    lines.push('AI Overview:', c.ai_overview.text);
    for (const r of c.ai_overview.references) lines.push(`  [${r.index}] ${r.title}${r.link ? ` ${r.link}` : ''}`);
    lines.push('');
  }
  lines.push(`Organic results (${c.organic_results.length}):`);
  for (const r of c.organic_results) {
    lines.push(`${r.position}. ${r.title}${r.link ? ` ${r.link}` : ''}${r.date ? ` (${r.date})` : ''}`);
    if (r.snippet) lines.push(`   ${r.snippet}`);
  }
  for (const [name, items] of Object.entries(c.features)) {
    lines.push('', `${name}:`, ...items.map((i) => `- ${i.replace(/^- /, '  ')}`));
  }
  return lines.join('\n');
};
