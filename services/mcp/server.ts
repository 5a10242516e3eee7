import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { LocationStatus } from '../../contracts/events.js';
import {
  type SerpGetResultsInput as GetArgs,
  type JobOutcome,
  JobOutcome as JobOutcomeSchema,
  SerpGetResultsInput,
  SerpRankHistoryInput,
  SerpRankHistoryOutput,
  SerpScreenshotInput,
  SerpScreenshotOutput,
  SerpSearchInput,
  SerpUsageOutput,
} from '../../contracts/mcp.js';
import {
  type QueuePosition,
  QueuePosition as QueuePositionSchema,
  type UsageResponse,
} from '../../contracts/search.js';
import { isWrongPlace, misplacedSentence } from '../../domain/location/placement.js';
import type { V1Client } from '../client/v1Client.js';
import { V1Error } from '../client/v1Client.js';
import { compactResult, compactText } from './compact.js';
import { rankHistory, rankHistoryText } from './rankHistory.js';
import { screenshotOf, screenshotText } from './screenshot.js';

/**
 * The MCP server (docs/mcp.md#tools): its tools over the `/v1` surface, the same for stdio (`serp-api-mcp`) and for
 * Streamable HTTP at `/mcp`. A cheap factory: `/mcp` builds one per session.
 */
export interface McpServerOptions {
  client: V1Client;
  version: string;
  /** how often a waiting serp_search polls (default 1.5–2 s, jittered) */
  pollMs?: () => number;
}

type Obj = Record<string, unknown>;
type Output = GetArgs['output'];
type Mode = GetArgs['mode'];

const defaultPoll = () => 1500 + Math.floor(Math.random() * 500);

/** what to do next; a job that waits behind others says when it should start (docs/fleet.md#lanes-and-fair-share) */
const nextStep = (jobId: string, queue?: QueuePosition) => {
  const wait = queue?.estimated_start_s ? Math.max(2, Math.ceil(queue.estimated_start_s)) : 2;
  return `call serp_get_results with job_id "${jobId}" in about ${wait} seconds (a search takes 5-30 s once it starts)`;
};

/**
 * the queue in a sentence: "3 jobs ahead of it in the live lane, starting in about 4 s"; with nothing ahead but every
 * crawl slot of the lane busy, "next in the bulk lane, starting in about 6 s" (docs/fleet.md#lanes-and-fair-share)
 */
const queueText = (q: QueuePosition | undefined) => {
  if (!q || (q.ahead === 0 && !q.estimated_start_s)) return '';
  const eta = q.estimated_start_s === null ? '' : `, starting in about ${Math.ceil(q.estimated_start_s)} s`;
  if (q.ahead === 0) return ` (next in the ${q.lane} lane${eta})`;
  return ` (${q.ahead} job${q.ahead === 1 ? '' : 's'} ahead of it in the ${q.lane} lane${eta})`;
};

const textOf = (o: JobOutcome): string => {
  if (o.status === 'queued' || o.status === 'running')
    return `Job ${o.job_id} is ${o.status}${queueText(o.queue)}: ${o.next}.`;
  if (o.html_url) return `Raw HTML of job ${o.job_id} (${o.status}): ${o.html_url} (link valid until ${o.expires_at}).`;
  const head = `Job ${o.job_id}: ${o.status}${o.cached ? ' (served from cache, no quota used)' : ''}.`;
  if (!o.result) return head;
  if (o.mode === 'compact') return `${head}\n\n${compactText(o.result as ReturnType<typeof compactResult>)}`;
  return `${head}\n\n${JSON.stringify(o.result)}`;
};

const ok = (o: JobOutcome): CallToolResult => ({
  content: [{ type: 'text', text: textOf(o) }],
  structuredContent: o as Obj,
});

const failure = (text: string): CallToolResult => ({ content: [{ type: 'text', text }], isError: true });

/**
 * When a monthly quota renews, from the 429's Retry-After: a month starts on a whole minute, and Retry-After is
 * rounded up to whole seconds and read a moment after it was sent, so the nearest whole minute is the renewal itself
 * (not 00:00:01).
 */
const renewalText = (seconds: number) =>
  new Date(Math.round((Date.now() + seconds * 1000) / 60_000) * 60_000).toISOString().replace(/\.\d+Z$/, 'Z');

/** A service error as an agent can act on it: the service's detail, and for a 429 which limit and when to retry. */
export const errorText = (err: V1Error): string => {
  switch (err.kind) {
    case 'quota':
      return `Quota exhausted (HTTP 429): ${err.detail}. This key's monthly quota is used up${
        err.retryAfter !== undefined
          ? `; it renews at ${renewalText(err.retryAfter)} (retry after ${err.retryAfter} s)`
          : ''
      }. serp_usage shows the numbers.`;
    case 'rate':
      return `Rate limited (HTTP 429): ${err.detail}. Too many requests this minute; retry in ${err.retryAfter ?? 60} s.`;
    case 'auth':
      return `The API key was refused (HTTP ${err.status}): ${err.detail}. Check SERP_API_KEY.`;
    case 'not_found':
      return `Not found (HTTP 404): ${err.detail}. Use a job_id that serp_search returned with this key.`;
    case 'expired':
      return `Expired (HTTP 410): ${err.detail}. Results are kept for the retention period only; search again.`;
    case 'invalid':
      return `Invalid arguments (HTTP ${err.status}): ${err.detail}`;
    case 'unavailable':
      return `The search service is unavailable (${err.status}): ${err.detail}. Retry in a few seconds.`;
    default:
      return `The search service answered HTTP ${err.status}: ${err.detail}`;
  }
};

/** A 200 from `/v1/search/{id}` (or a synchronous submit) as a tool's outcome. */
const outcomeOf = (jobId: string, body: Obj, output: Output, mode: Mode, cached?: boolean): JobOutcome | string => {
  const meta = (body.search_metadata ?? {}) as Obj;
  if (body.status === 'failed' || meta.status === 'Error') {
    const detail = String(body.detail ?? body.error ?? 'the search failed');
    return `Search failed (job ${jobId}): ${detail}`;
  }
  // a search Google placed elsewhere even on another route is a failure here too: its ranks are another place's
  // (docs/locations.md#what-each-surface-answers)
  const check = meta.location_check as
    | { status?: string; requested?: string; detected?: { name?: string } }
    | undefined;
  if (meta.status === 'partial' && check && isWrongPlace(check.status as LocationStatus)) {
    const detail = misplacedSentence({
      status: check.status as LocationStatus,
      ...(check.requested ? { requested: check.requested } : {}),
      ...(check.detected?.name ? { detected: check.detected.name } : {}),
    });
    return `Search placed elsewhere (job ${jobId}, location_mismatch): ${detail}`;
  }
  if (typeof body.html_url === 'string' && typeof body.location_check === 'string') {
    const detail = misplacedSentence({ status: body.location_check as LocationStatus });
    return `Search placed elsewhere (job ${jobId}, location_mismatch): ${detail} Its raw pages: ${body.html_url}`;
  }
  if (typeof body.html_url === 'string') {
    return {
      job_id: jobId,
      status: body.status as JobOutcome['status'],
      output,
      html_url: body.html_url,
      expires_at: String(body.expires_at),
    };
  }
  const status = meta.status === 'partial' ? 'partial' : 'done';
  const isCached = cached ?? (typeof meta.cached === 'boolean' ? meta.cached : undefined);
  return {
    job_id: jobId,
    status,
    ...(isCached !== undefined ? { cached: isCached } : {}),
    output,
    mode,
    result: mode === 'compact' ? compactResult(body) : body,
  };
};

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });

const usageText = (u: UsageResponse) =>
  `Tier ${u.tier}: ${
    u.remaining === null
      ? `${u.used_this_month} searches used this month (no monthly limit)`
      : `${u.used_this_month} of ${u.monthly_quota} searches used this month, ${u.remaining} remaining`
  }; up to ${u.rate_limit_per_min} submits per minute.`;

const guarded = async (run: () => Promise<CallToolResult>): Promise<CallToolResult> => {
  try {
    return await run();
  } catch (err) {
    if (err instanceof V1Error) return failure(errorText(err));
    throw err;
  }
};

export const createMcpServer = (options: McpServerOptions): McpServer => {
  const { client } = options;
  const pollMs = options.pollMs ?? defaultPoll;
  const server = new McpServer(
    { name: 'serp-api', title: 'SERP API', version: options.version },
    {
      instructions:
        'Live Google results. serp_search runs a search (up to the top 100 organic results, `depth` sets how many; AI Overview, SERP features) and by default waits for it; serp_get_results reads a job by id (compact by default, mode=full for the whole body, start for ten results from an offset); serp_usage shows the quota. A fresh identical search is served from cache and uses no quota.',
    },
  );

  const fetchOutcome = async (jobId: string, output: Output, mode: Mode, start?: number, cached?: boolean) => {
    const res = await client.result(jobId, { output, start });
    if (res.status === 202) {
      const queue = QueuePositionSchema.safeParse(res.body.queue);
      return {
        job_id: jobId,
        status: 'running',
        next: nextStep(jobId, queue.success ? queue.data : undefined),
        ...(queue.success ? { queue: queue.data } : {}),
      } satisfies JobOutcome;
    }
    return outcomeOf(jobId, res.body, output, mode, cached);
  };
  const answer = (o: JobOutcome | string) => (typeof o === 'string' ? failure(o) : ok(o));

  server.registerTool(
    'serp_search',
    {
      title: 'Search Google',
      description:
        'Run a live Google search for `keyword`, targeted by location (a place name such as "Austin, Texas, United States", or uule, or lat/lon), language (hl), country (gl) and device. Returns the top `depth` organic results (10 to 100, default 100; depth=10 is one Google page and the quickest), the AI Overview (unless capture_aio=false) and the other SERP features. By default waits for the result (polling every ~2 s for up to max_wait_seconds) and returns it compact; with wait=false, or when the wait runs out, returns a job_id for serp_get_results. Costs one search of the monthly quota unless an identical search at least as deep is cached (no_cache=true forces a new crawl).',
      inputSchema: SerpSearchInput,
      outputSchema: JobOutcomeSchema,
      annotations: { title: 'Search Google', readOnlyHint: true, openWorldHint: true, idempotentHint: false },
    },
    async (args, extra) =>
      guarded(async () => {
        const { wait, max_wait_seconds, output, mode, ...search } = args;
        const submitted = await client.submit(search);
        const jobId = String(submitted.body.job_id);
        const cached = submitted.body.cached === true;
        if (cached) return answer(await fetchOutcome(jobId, output, mode, undefined, true));
        if (!wait) {
          const queue = QueuePositionSchema.safeParse(submitted.body.queue);
          return ok({
            job_id: jobId,
            status: 'queued',
            cached: false,
            next: nextStep(jobId, queue.success ? queue.data : undefined),
            ...(queue.success ? { queue: queue.data } : {}),
          });
        }
        const started = Date.now();
        const deadline = started + max_wait_seconds * 1000;
        const progressToken = extra._meta?.progressToken;
        for (;;) {
          const pause = Math.min(pollMs(), Math.max(0, deadline - Date.now()));
          await sleep(pause, extra.signal);
          if (extra.signal.aborted) return failure(`serp_search was cancelled; the job ${jobId} still runs.`);
          const o = await fetchOutcome(jobId, output, mode, undefined, false);
          if (typeof o === 'string' || o.status !== 'running') return answer(o);
          if (Date.now() >= deadline) {
            return ok({
              ...o,
              next: `still running after ${max_wait_seconds} s: ${nextStep(jobId)}`,
            });
          }
          if (progressToken !== undefined) {
            await extra.sendNotification({
              method: 'notifications/progress',
              params: {
                progressToken,
                progress: Math.round((Date.now() - started) / 1000),
                total: max_wait_seconds,
                message: `job ${jobId} running${queueText(o.queue)}`,
              },
            });
          }
        }
      }),
  );

  server.registerTool(
    'serp_get_results',
    {
      title: 'Get search results',
      description:
        'Read a search job by the job_id serp_search returned. While it runs the result says status "running": call again in about 2 seconds. Once done: output=json (native) or compat (SerpApi names), compact by default (mode=full for the whole body, 50-150 kB), or output=html for a signed link to the raw Google pages; start=N returns ten organic results from offset N. Reading a job costs no quota.',
      inputSchema: SerpGetResultsInput,
      outputSchema: JobOutcomeSchema,
      annotations: { title: 'Get search results', readOnlyHint: true, openWorldHint: false, idempotentHint: true },
    },
    async (args) => guarded(async () => answer(await fetchOutcome(args.job_id, args.output, args.mode, args.start))),
  );

  server.registerTool(
    'serp_usage',
    {
      title: 'Usage and quota',
      description:
        "This API key's tier, monthly quota, searches used this month, what remains (null: unlimited) and its per-minute submit rate.",
      outputSchema: SerpUsageOutput,
      annotations: { title: 'Usage and quota', readOnlyHint: true, openWorldHint: false, idempotentHint: true },
    },
    async () =>
      guarded(async () => {
        const usage = await client.usage();
        return { content: [{ type: 'text', text: usageText(usage) }], structuredContent: usage as unknown as Obj };
      }),
  );

  server.registerTool(
    'serp_rank_history',
    {
      title: 'Rank history',
      description:
        'Positions over time from this key\'s rank-tracking monitors: by monitor_id (every keyword and domain), or by keyword and domain across the key\'s monitors. Compact: dates and positions ("not_ranked": searched, absent from the monitor\'s depth; "failed": the search failed, never a position), with the best position. A monitor with pixel_positions adds to each search it measured a third element, {pixels_from_top, above_the_fold}: how far down the first page the best result lay, in CSS pixels (null: not on the first page), and whether it showed on the first screen; and to each series above_the_fold_share (0-1, of the searches measured). Costs no quota.',
      inputSchema: SerpRankHistoryInput,
      outputSchema: SerpRankHistoryOutput,
      annotations: { title: 'Rank history', readOnlyHint: true, openWorldHint: false, idempotentHint: true },
    },
    async (args) =>
      guarded(async () => {
        const out = await rankHistory(client, args);
        return { content: [{ type: 'text', text: rankHistoryText(out) }], structuredContent: out as unknown as Obj };
      }),
  );

  server.registerTool(
    'serp_screenshot',
    {
      title: 'Screenshot of a search',
      description:
        "The first screen of a finished search's Google page as an image, rendered from the page as it was stored, with the rectangles (CSS pixels from the top left) of the organic results of `domain` (every organic result without one) and whether each is above the fold. The first call renders the page (about a second); later calls read it back. Costs no quota.",
      inputSchema: SerpScreenshotInput,
      outputSchema: SerpScreenshotOutput,
      annotations: { title: 'Screenshot of a search', readOnlyHint: true, openWorldHint: false, idempotentHint: true },
    },
    async (args) =>
      guarded(async () => {
        const { image, out } = await screenshotOf(client, args);
        return {
          content: [
            { type: 'image', data: image.toString('base64'), mimeType: 'image/png' },
            { type: 'text', text: screenshotText(out) },
          ],
          structuredContent: out as unknown as Obj,
        };
      }),
  );

  return server;
};
