import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import type { Command } from 'commander';
import type { ParsedSerp } from '../../../contracts/result.js';
import { mergePages, PARSER_VERSION, type ParseOutcome, splitRawHtml, toCompat } from '../../../parser/index.js';
import { tbmOf } from '../../../parser/news.js';
import { loadConfig } from '../../config/config.js';
import { MAX_PAGE_BYTES } from '../../crawler/fetchPage.js';
import { MAX_PAGE_TAGS, type PageParser, ParseTimeoutError } from '../../ports/pageParser.js';
import { createParsePool } from '../../threads/parsePool.js';

/** A page the CLI refuses to parse, as the crawler would (docs/security.md). */
class NotParsed extends Error {}

/**
 * Each page of the file read as the crawler reads a fetched page: on a parse thread, under the crawler's caps (bytes,
 * tags) and its deadline (SERP_PARSE_TIMEOUT_MS), so a file that would hold a parse thread cannot hold the CLI. Then
 * merged as `parseRaw` merges them.
 */
const parseFile = async (html: string, captureAio: boolean, parser: PageParser): Promise<ParseOutcome> => {
  const serps: Array<{ start: number; serp: ParsedSerp }> = [];
  let first: ParseOutcome | undefined;
  for (const page of splitRawHtml(html)) {
    const where = page.start ? `the page at start=${page.start}` : 'the page';
    const body = Buffer.from(page.html, 'utf8');
    if (body.byteLength > MAX_PAGE_BYTES) {
      throw new NotParsed(`${where} is ${body.byteLength} bytes, over the ${MAX_PAGE_BYTES} the crawler reads`);
    }
    const read = await parser
      .read(body, { captureAio, start: page.start, tbm: tbmOf(page.url) }, '')
      .catch((err: unknown) => {
        if (err instanceof ParseTimeoutError) throw new NotParsed(`${where} did not parse within ${err.timeoutMs} ms`);
        throw err;
      });
    const { outcome } = read;
    if (outcome.kind === 'too_large') {
      throw new NotParsed(`${where} holds more than ${MAX_PAGE_TAGS} tags, more than any result page`);
    }
    first ??= outcome;
    if (outcome.kind === 'serp') serps.push({ start: page.start, serp: outcome.serp });
  }
  if (serps.length > 0) return { kind: 'serp', serp: mergePages(serps) };
  return first && first.kind !== 'serp' ? first : { kind: 'error', detail: 'no page in raw HTML' };
};

/**
 * `serp-api parse FILE [--output json|compat]`: the parser over a saved page (`.html`, `.html.gz`, or stored raw
 * HTML with several `serp-page` markers). An interstitial (CAPTCHA, JS challenge, consent, error) is reported on
 * stderr with exit code 2, because a script piping the JSON must not mistake it for an empty result; a page over the
 * crawler's caps or its deadline, with exit code 1.
 */
export const registerParseCommand = (program: Command): void => {
  program
    .command('parse')
    .description('parse a saved Google results page and print the result as JSON')
    .argument('<file>', 'a .html or .html.gz file')
    .option('--output <format>', 'json (native) or compat (SerpApi names)', 'json')
    .option('--no-aio', 'leave out the AI overview')
    .action(async (file: string, opts: { output: string; aio: boolean }) => {
      if (opts.output !== 'json' && opts.output !== 'compat') {
        process.stderr.write(`--output must be json or compat, not ${opts.output}\n`);
        process.exitCode = 1;
        return;
      }
      const config = loadConfig();
      let html: string;
      try {
        const buf = readFileSync(file);
        // By content, not by name: a gzip stream starts 1f 8b whatever the file is called.
        html = (buf[0] === 0x1f && buf[1] === 0x8b ? gunzipSync(buf) : buf).toString('utf8');
      } catch (err) {
        const e = err as NodeJS.ErrnoException;
        const why =
          e.code === 'ENOENT' ? 'no such file' : e.code === 'Z_DATA_ERROR' ? 'not a valid gzip file' : e.message;
        process.stderr.write(`cannot read ${file}: ${why}\n`);
        process.exitCode = 1;
        return;
      }
      const parser = createParsePool({ ...config, parseThreads: 1 });
      let outcome: ParseOutcome;
      try {
        outcome = await parseFile(html, opts.aio, parser);
      } catch (err) {
        if (!(err instanceof NotParsed)) throw err;
        process.stderr.write(`not parsed: ${err.message}\n`);
        process.exitCode = 1;
        return;
      } finally {
        await parser.close();
      }
      if (outcome.kind !== 'serp') {
        process.stderr.write(`not a results page: ${outcome.kind} (${outcome.detail})\n`);
        process.exitCode = 2;
        return;
      }
      const now = new Date().toISOString();
      const { serp } = outcome;
      const result = {
        search_metadata: {
          id: 'local-file',
          status: 'done',
          cached: false,
          created_at: now,
          processed_at: now,
          parser_version: PARSER_VERSION,
          parameters: { file, ...(serp.information.query_displayed ? { q: serp.information.query_displayed } : {}) },
          information: serp.information,
        },
        organic_results: serp.organic_results,
        serp_features: serp.serp_features,
        ...(serp.ai_overview ? { ai_overview: serp.ai_overview } : {}),
      };
      const body = opts.output === 'compat' ? toCompat(result) : result;
      process.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
    });
};
