import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { Presets, SingleBar } from 'cli-progress';
import { type Command, InvalidArgumentError, Option } from 'commander';
import pLimit from 'p-limit';
import pRetry, { AbortError } from 'p-retry';
import pThrottle from 'p-throttle';
import { MAX_DEPTH, MIN_DEPTH } from '../../../contracts/search.js';
import { type V1Client, V1Error } from '../../client/v1Client.js';
import { loadClientPollMs } from '../../config/clients.js';
import { csvLines } from '../../export/csv.js';
import { type BatchProgress, donePerMinute, progressLine, submitsPerMinute, summaryLine } from '../progress.js';
import { SERVICE_OPTIONS, type ServiceFlags, serviceClient } from '../serviceClient.js';

/**
 * `serp-api search` and `serp-api batch`: clients of a running service's /v1 (any mode), for people who track many
 * keywords. Submits stay under the key's per-minute rate (p-throttle, evenly spaced), polls come every 1.5–2 s,
 * a 429 waits its Retry-After, a 5xx or a network error is retried with jittered exponential backoff (p-retry),
 * and a batch is resumable: a state file beside the output records each submitted job and each finished keyword,
 * so after Ctrl-C or a crash `--resume` polls the jobs already submitted and never searches a keyword twice.
 */

const positive = (what: string) => (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError(`${what} must be a whole number ≥ 1`);
  return n;
};

interface SearchFlags {
  location?: string;
  device?: string;
  gl?: string;
  hl?: string;
  depth?: number;
  priority?: 'live' | 'bulk';
}

/** --depth: results wanted, as /v1 takes it (docs/depth.md) */
const depthArg = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < MIN_DEPTH || n > MAX_DEPTH)
    throw new InvalidArgumentError(`--depth must be a whole number of results from ${MIN_DEPTH} to ${MAX_DEPTH}`);
  return n;
};

const bodyOf = (keyword: string, o: SearchFlags) => ({
  keyword,
  ...(o.location ? { location: o.location } : {}),
  ...(o.device ? { device: o.device } : {}),
  ...(o.gl ? { gl: o.gl } : {}),
  ...(o.hl ? { hl: o.hl } : {}),
  ...(o.depth !== undefined ? { depth: o.depth } : {}),
  ...(o.priority ? { priority: o.priority } : {}),
});

/** --priority: the lane the searches wait in (docs/fleet.md#lanes-and-fair-share) */
const priorityOption = (fallback: 'live' | 'bulk', what: string) =>
  new Option('--priority <lane>', `the lane the searches wait in: live or bulk (${what})`)
    .choices(['live', 'bulk'])
    .default(fallback);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** the pause between polls of a job: SERP_CLIENT_POLL_MS (1.5 s) and up to a third more, jittered */
let pollMs: number | undefined;
const pollGap = () => {
  pollMs ??= loadClientPollMs();
  return pollMs + (Math.random() * pollMs) / 3;
};

/** a call with the retry policy: 5xx/network with jittered backoff, 429 rate after its Retry-After; others final */
const withRetries = <T>(fn: () => Promise<T>, onWait?: (why: string) => void) =>
  pRetry(
    async () => {
      try {
        return await fn();
      } catch (err) {
        if (err instanceof V1Error && (err.kind === 'unavailable' || err.kind === 'rate')) throw err;
        throw new AbortError(err instanceof Error ? err : new Error(String(err)));
      }
    },
    {
      retries: 8,
      factor: 2,
      minTimeout: 1_000,
      maxTimeout: 30_000,
      randomize: true,
      onFailedAttempt: async ({ error }) => {
        if (error instanceof V1Error && error.kind === 'rate' && error.retryAfter !== undefined) {
          onWait?.(`rate limited: waiting ${error.retryAfter} s`);
          await sleep(error.retryAfter * 1_000);
        } else onWait?.(`retrying: ${error.message}`);
      },
    },
  );

/** polls a job until it ended; resolves with its answer in `output` */
const waitForJob = async (client: V1Client, jobId: string, output: string, onWait?: (why: string) => void) => {
  for (;;) {
    const res = await withRetries(() => client.result(jobId, { output }), onWait);
    if (res.status !== 202) return res.body;
    await sleep(pollGap());
  }
};

const domainOf = (link: string) => {
  try {
    return new URL(link).hostname.replace(/^www\./, '');
  } catch {
    return '';
  }
};

const CSV_HEADER = ['keyword', 'position', 'title', 'link', 'domain'];

/** A keyword's CSV rows, one per organic result, through the exports' one writer (it escapes formulas). */
export const csvRows = (
  keyword: string,
  organic: ReadonlyArray<{ position: number; title: string; link: string }>,
): string => csvLines(organic.map((r) => [keyword, r.position, r.title, r.link, domainOf(r.link)]));

export const registerSearchCommands = (program: Command) => {
  const clientOptions = (c: Command) =>
    c
      .option(...SERVICE_OPTIONS.baseUrl)
      .option(...SERVICE_OPTIONS.key)
      .option(...SERVICE_OPTIONS.data)
      .option('--location <name>', 'e.g. "Austin, Texas, United States"')
      .addOption(new Option('--device <device>').choices(['desktop', 'mobile', 'tablet']))
      .option('--gl <country>', 'Google country code')
      .option('--hl <language>', 'Google interface language')
      .option(
        '--depth <n>',
        `organic results wanted, ${MIN_DEPTH}-${MAX_DEPTH} (default ${MAX_DEPTH}); 10 is one Google page, the cheapest`,
        depthArg,
      );

  clientOptions(program.command('search <keyword>'))
    .description('search one keyword on a running service and print the result (waits for it)')
    .addOption(priorityOption('live', 'default live: an interactive search'))
    .addOption(new Option('--output <output>', 'json or compat').choices(['json', 'compat']).default('json'))
    .action(async (keyword: string, o: ServiceFlags & SearchFlags & { output: string }) => {
      const client = await serviceClient(o);
      const note = (why: string) => console.error(`serp-api: ${why}`);
      const submitted = await withRetries(() => client.submit(bodyOf(keyword, o)), note);
      const jobId = String(submitted.body.job_id);
      const result = await waitForJob(client, jobId, o.output, note);
      // pretty for a person at a terminal; one line into a pipe, so `| head -1` or a JSON-lines reader gets it whole
      process.stdout.write(`${JSON.stringify(result, null, process.stdout.isTTY ? 2 : undefined)}\n`);
      if ((result as { search_metadata?: { status?: string } }).search_metadata?.status === 'failed') process.exit(1);
    });

  clientOptions(program.command('batch <file>'))
    .description(
      'search every keyword of FILE (one per line; empty lines and # comments skipped) under the key’s rate, ' +
        'with a progress bar; results to --out as JSONL (whole results) or CSV (one row per organic result)',
    )
    .addOption(
      priorityOption('bulk', 'default bulk: a batch waits behind live searches, which keep it from holding anyone up'),
    )
    .option('--out <file>', 'results.jsonl, or a .csv file', 'results.jsonl')
    .option('--concurrency <n>', 'keywords in flight at once', positive('--concurrency'), 8)
    .option('--rate <n>', 'submits per minute (default: the key’s rate_limit_per_min)', positive('--rate'))
    .option('--resume', 'continue the batch whose state file is beside --out')
    .action(
      async (
        file: string,
        o: ServiceFlags & SearchFlags & { out: string; concurrency: number; rate?: number; resume?: boolean },
      ) => {
        const client = await serviceClient(o);
        if (!existsSync(file)) throw new Error(`no such file: ${file}`);
        const all = readFileSync(file, 'utf8')
          .split(/\r?\n/)
          .map((l) => l.trim())
          .filter((l) => l && !l.startsWith('#'));
        const keywords = [...new Set(all)];
        const csv = extname(o.out).toLowerCase() === '.csv';
        const statePath = `${o.out}.state`;
        if (!o.resume && (existsSync(o.out) || existsSync(statePath))) {
          throw new Error(`${o.out} or its state file exists: pass --resume to continue that batch, or another --out`);
        }
        // what a previous run got to: submitted jobs (polled again, never resubmitted) and finished keywords
        const submitted = new Map<string, string>();
        const done = new Set<string>();
        if (o.resume && existsSync(statePath)) {
          for (const line of readFileSync(statePath, 'utf8').split('\n')) {
            if (!line.trim()) continue;
            try {
              const s = JSON.parse(line) as { k: string; job?: string; done?: string };
              if (s.job) submitted.set(s.k, s.job);
              if (s.done) done.add(s.k);
            } catch {
              // a line torn by a crash: the keyword's other line says where it was
            }
          }
        }
        const todo = keywords.filter((k) => !done.has(k));
        const usage = await withRetries(() => client.usage());
        const rate = o.rate ?? usage.rate_limit_per_min;
        const fresh = todo.filter((k) => !submitted.has(k)).length;
        if (usage.remaining !== null && usage.remaining < fresh) {
          console.error(
            `serp-api: warning: ${fresh} searches to submit but ${usage.remaining} left this month: the batch stops when the quota runs out (resume next month)`,
          );
        }
        if (csv && !existsSync(o.out)) appendFileSync(o.out, csvLines([CSV_HEADER]));
        const record = (s: Record<string, string>) => appendFileSync(statePath, `${JSON.stringify(s)}\n`);

        const total = keywords.length;
        let finished = keywords.length - todo.length;
        let failed = 0;
        const started = Date.now();
        const startedFrom = finished;
        let submits = 0;
        let cached = 0;
        const now = (): BatchProgress => ({
          total,
          finished,
          failed,
          submits,
          cached,
          finishedBefore: startedFrom,
          elapsedMs: Date.now() - started,
          rate,
        });
        const tty = Boolean(process.stderr.isTTY);
        const bar = tty
          ? new SingleBar(
              {
                format:
                  'batch {bar} {value}/{total} | submits {submits}/min (key allows {rate}/min) | done {speed}/min | ETA {eta_formatted} | failed {failed}',
                etaBuffer: 50,
                hideCursor: true,
                stream: process.stderr,
              },
              Presets.shades_classic,
            )
          : undefined;
        bar?.start(total, finished, { speed: '0.0', submits: '0.0', rate, failed });
        let lastLine = 0;
        const progress = () => {
          const p = now();
          if (bar)
            return bar.update(finished, {
              speed: donePerMinute(p).toFixed(1),
              submits: submitsPerMinute(p).toFixed(1),
              failed,
            });
          const step = Math.max(1, Math.floor(total / 50));
          if (finished === total || finished - lastLine >= step) {
            lastLine = finished;
            console.error(progressLine(p));
          }
        };
        const note = (why: string) => (bar ? undefined : console.error(`batch: ${why}`));

        process.once('SIGINT', () => {
          bar?.stop();
          console.error(`\ninterrupted: ${finished}/${total} done; run again with --resume to continue`);
          process.exit(130);
        });

        const throttledSubmit = pThrottle({ limit: 1, interval: Math.ceil(60_000 / rate) })((keyword: string) =>
          withRetries(() => client.submit(bodyOf(keyword, o)), note),
        );
        let quotaOut: V1Error | undefined;
        const limit = pLimit(o.concurrency);
        await Promise.all(
          todo.map((keyword) =>
            limit(async () => {
              if (quotaOut) return;
              try {
                let jobId = submitted.get(keyword);
                if (!jobId) {
                  const res = await throttledSubmit(keyword);
                  submits++;
                  if (res.body.cached === true) cached++;
                  jobId = String(res.body.job_id);
                  record({ k: keyword, job: jobId });
                }
                const result = (await waitForJob(client, jobId, 'json', note)) as {
                  search_metadata?: { status?: string };
                  organic_results?: Array<{ position: number; title: string; link: string }>;
                  detail?: string;
                };
                const status = result.search_metadata?.status ?? 'failed';
                if (csv) {
                  const rows = csvRows(keyword, result.organic_results ?? []);
                  if (rows) appendFileSync(o.out, rows);
                } else {
                  appendFileSync(o.out, `${JSON.stringify({ keyword, job_id: jobId, status, result })}\n`);
                }
                record({ k: keyword, done: status });
                if (status === 'failed') failed++;
              } catch (err) {
                if (err instanceof V1Error && err.kind === 'quota') {
                  quotaOut = err;
                  return;
                }
                failed++;
                if (!csv) {
                  appendFileSync(
                    o.out,
                    `${JSON.stringify({ keyword, status: 'error', detail: (err as Error).message })}\n`,
                  );
                }
                record({ k: keyword, done: 'error' });
              }
              finished++;
              progress();
            }),
          ),
        );
        bar?.stop();
        console.error(summaryLine(now(), o.out));
        if (quotaOut) {
          console.error(`batch: stopped, ${quotaOut.detail}; run again with --resume once the quota renews`);
          process.exit(3);
        }
        if (failed > 0) process.exit(1);
      },
    );
};
