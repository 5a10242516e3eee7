import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import type { Command } from 'commander';
import { PARSER_VERSION, parseRaw, toCompat } from '../../../parser/index.js';

/**
 * `serp-api parse FILE [--output json|compat]`: the parser over a saved page (`.html`, `.html.gz`, or stored raw
 * HTML with several `serp-page` markers). An interstitial (CAPTCHA, JS challenge, consent, error) is reported on
 * stderr with exit code 2, because a script piping the JSON must not mistake it for an empty result.
 */
export const registerParseCommand = (program: Command): void => {
  program
    .command('parse')
    .description('parse a saved Google results page and print the result as JSON')
    .argument('<file>', 'a .html or .html.gz file')
    .option('--output <format>', 'json (native) or compat (SerpApi names)', 'json')
    .option('--no-aio', 'leave out the AI overview')
    .action((file: string, opts: { output: string; aio: boolean }) => {
      if (opts.output !== 'json' && opts.output !== 'compat') {
        process.stderr.write(`--output must be json or compat, not ${opts.output}\n`);
        process.exitCode = 1;
        return;
      }
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
      const outcome = parseRaw(html, { captureAio: opts.aio });
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
