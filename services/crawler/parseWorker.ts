import { type ParseContext, type ParseOutcome, parse } from '../../parser/index.js';

/** One page, in a worker thread of the crawler's parse pool (services/crawler/parsePool.ts). */
export default ({ html, context }: { html: string; context: ParseContext }): ParseOutcome => parse(html, context);
