import { type ParseContext, parse } from '../../parser/index.js';
import { MAX_PAGE_TAGS, type PackedPage, type PageParser, type PageRead } from '../ports/pageParser.js';
import { packPageAsync } from './rawPacker.js';

/** `<` in `bytes`, stopping once past `limit` */
const tagsIn = (bytes: Buffer, limit: number): number => {
  let n = 0;
  for (let at = bytes.indexOf(0x3c); at !== -1 && n <= limit; at = bytes.indexOf(0x3c, at + 1)) n += 1;
  return n;
};

/** Decode, parse and pack, the same on whichever thread it runs. */
export const readPage = async (
  body: Uint8Array,
  context: ParseContext,
  rawHead: string,
  pack: (head: string, body: Uint8Array) => PackedPage | Promise<PackedPage>,
): Promise<PageRead> => {
  const bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const tags = tagsIn(bytes, MAX_PAGE_TAGS);
  if (tags > MAX_PAGE_TAGS) return { outcome: { kind: 'too_large', tags } };
  const outcome = parse(bytes.toString('utf8'), context);
  return outcome.kind === 'serp' ? { outcome, raw: await pack(rawHead, body) } : { outcome };
};

/**
 * Parses on the calling thread (tests, SERP_PARSE_THREADS=0); gzip runs on libuv's pool. Nothing can end a parse
 * that runs on the calling thread: this parser has no deadline (docs/security.md).
 */
export const inlineParser: PageParser = {
  read: (body, context, rawHead) => readPage(body, context, rawHead, packPageAsync),
  close: async () => undefined,
};
