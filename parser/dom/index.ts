/**
 * The parser's HTML document library: a tokenizer that never backtracks (tokenizer.ts), the tree node-html-parser
 * would build (build.ts, repair.ts) with its nodes and indexes (nodes.ts), entity decoding
 * (entities.ts), a CSS selector subset (select.ts) and text helpers (text.ts).
 */
export { parseDocument } from './build.js';
export { decodeAttribute, decodeText } from './entities.js';
export { type HTMLDocument, HTMLElement, type HTMLNode, HTMLText } from './nodes.js';
export { closest, qs, qsa } from './select.js';
export { closestWhere, hasAncestor, hasClass, loadDom, spacedText, textOf } from './text.js';
