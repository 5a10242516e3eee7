import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { seeded } from '../support/adversary.js';
import type { SoakStack } from './stack.js';
import { ADMIN_TOKEN } from './stack.js';

/**
 * The soak's traffic (docs/operations.md#the-soak): several keys on the live, scheduled and bulk lanes, through every
 * surface (/v1 searches, compat GET /search, MCP over /mcp, monitors with runs, webhooks) and reads, in bounded loops
 * with pauses, on loopback only. Every job the harness was answered for is recorded with what it was told, so the
 * invariants can hold the service to the docs' charging rules.
 */

export type Via = 'v1' | 'v1_bulk' | 'v1_repeat' | 'compat' | 'mcp' | 'monitor_run' | 'monitor_slot';

export interface TrackedJob {
  id: string;
  key: string;
  via: Via;
  acceptedAt: number;
  /** the answer said it was served from cache (no quota) */
  cached: boolean;
}

export interface SoakKey {
  label: string;
  key: string;
  keyId: string;
}

export interface Endpoint {
  key: string;
  webhookId: string;
  receiver: number;
  path: string;
  createdAt: number;
  types: string[];
}

export interface Answer {
  route: string;
  status: number;
  at: number;
  ms: number;
}

export interface Traffic {
  keys: Record<string, SoakKey>;
  jobs: Map<string, TrackedJob>;
  endpoints: Endpoint[];
  monitors: { id: string; key: string }[];
  /** submits whose outcome the harness cannot know (5xx, a dropped connection): each may have reserved */
  unknownSubmits: Record<string, number>;
  /** every answer's status by route, for the report (and the 5xx check) */
  answers: Answer[];
  /** reads' latencies (ms), when each was made, its route, and how late the harness's own loop was before it */
  reads: Read[];
  /** requests the harness made that failed without an answer (the service, or one process, was down) */
  dropped: { route: string; at: number; error: string }[];
  /** MCP sessions an api answered 404 for (it had restarted), each opened again */
  readonly mcpSessionsLost: number;
  /** replays at the caps: what the key was answered */
  replays: { at: number; statuses: number[] }[];
  /** starts every loop; resolves when `stop()` was called and each loop ended */
  run(): Promise<void>;
  stop(): void;
  /** reads measured alone before the traffic starts: the idle baseline */
  idleReads(count: number): Promise<Read[]>;
  /** ends the reader's process */
  close(): void;
  replayAtCaps(): Promise<number[]>;
}

/** a Server-Timing header's parts by name: each one's duration (ms) and description, as given */
export type ServerTimingParts = Record<string, { dur?: number; desc?: string }>;

/** `answer;desc=stored, job;dur=0.4, total;dur=1.2` as parts by name */
export const parseServerTiming = (header: string): ServerTimingParts => {
  const parts: ServerTimingParts = {};
  for (const item of header.split(',')) {
    const [name, ...params] = item.trim().split(';');
    if (!name) continue;
    const part: { dur?: number; desc?: string } = {};
    for (const p of params) {
      const [k, v] = p.trim().split('=');
      if (k === 'dur' && v !== undefined && Number.isFinite(Number(v))) part.dur = Number(v);
      if (k === 'desc' && v !== undefined) part.desc = v.replace(/^"|"$/g, '');
    }
    parts[name] = part;
  }
  return parts;
};

export interface Read {
  at: number;
  ms: number;
  route: string;
  /** how much later than asked the harness's last 50 ms pause ended: its own event loop's delay then */
  harnessLagMs: number;
  /** what the service's Server-Timing header said of it (docs/api.md#server-timing), when it sent one */
  serverTiming?: ServerTimingParts;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const LOCATIONS = [
  'Austin, Texas, United States',
  'Chicago, Illinois, United States',
  'Denver, Colorado, United States',
];

export const startTraffic = async (
  stack: SoakStack,
  options: { seed: number; runStartedAt: number; concurrency: number },
): Promise<Traffic> => {
  const random = seeded(options.seed ^ 0x5eed);
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
  let stopped = false;
  let counter = 0;
  const jobs = new Map<string, TrackedJob>();
  const answers: Answer[] = [];
  const dropped: Traffic['dropped'] = [];
  const reads: Traffic['reads'] = [];
  const unknownSubmits: Record<string, number> = {};
  const replays: Traffic['replays'] = [];
  /** MCP sessions an api answered 404 for (it had restarted), each opened again */
  let mcpSessionsLost = 0;
  let rr = 0;
  /** one api after another (a cluster has two); a request that met a dead one is not retried elsewhere */
  const api = () => {
    const urls = stack.apiUrls();
    rr += 1;
    return urls[rr % urls.length]!;
  };

  const request = async (
    route: string,
    url: string,
    init: RequestInit & { key?: string } = {},
  ): Promise<{ status: number; body: any; headers: Headers } | undefined> => {
    const t0 = performance.now();
    try {
      const headers: Record<string, string> = { ...(init.headers as Record<string, string>) };
      if (init.key) headers['x-api-key'] = init.key;
      if (init.body) headers['content-type'] = 'application/json';
      const res = await fetch(url, { ...init, headers, signal: AbortSignal.timeout(60_000) });
      const text = await res.text();
      const ms = performance.now() - t0;
      answers.push({ route, status: res.status, at: Date.now(), ms });
      let body: any;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        body = text;
      }
      return { status: res.status, body, headers: res.headers };
    } catch (err) {
      dropped.push({ route, at: Date.now(), error: String((err as Error).cause ?? err).slice(0, 200) });
      return undefined;
    }
  };

  const admin = (path: string, body: unknown) =>
    request('admin', `${api()}/admin/api${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      body: JSON.stringify(body),
    });

  // the keys: each lane and surface has its own, so what each was charged is read alone
  const keys: Record<string, SoakKey> = {};
  for (const label of ['live', 'bulk', 'monitor', 'mcp']) {
    const res = await admin('/keys', { label: `soak-${label}`, tier: 'pro', rate_limit_per_min: 6000 });
    if (!res || (res.status !== 201 && res.status !== 200)) throw new Error(`minting a key: ${JSON.stringify(res)}`);
    keys[label] = { label, key: res.body.key, keyId: res.body.key_id };
    unknownSubmits[label] = 0;
  }
  // in a cluster every api must know the keys before the traffic starts
  for (const url of stack.apiUrls()) {
    for (const k of Object.values(keys)) {
      for (let i = 0; i < 200; i++) {
        const r = await request('usage', `${url}/v1/usage`, { key: k.key });
        if (r?.status === 200) break;
        await sleep(50);
      }
    }
  }

  // webhooks: the live, bulk and monitor keys each have an endpoint on a receiver of their own
  const endpoints: Endpoint[] = [];
  const hooks: [string, number, string[]][] = [
    ['live', 0, ['search.completed', 'search.failed']],
    ['bulk', 1, ['search.completed', 'search.failed']],
    ['monitor', 2, ['search.completed', 'search.failed', 'monitor.run_completed']],
  ];
  for (const [label, receiver, types] of hooks) {
    const r = stack.receivers[receiver % stack.receivers.length]!;
    const path = `/hook-${label}`;
    const res = await request('webhooks', `${api()}/v1/webhooks`, {
      method: 'POST',
      key: keys[label]!.key,
      body: JSON.stringify({ url: `${r.origin}${path}`, events: types }),
    });
    if (res?.status !== 201) throw new Error(`creating a webhook: ${JSON.stringify(res)}`);
    r.setSecrets(path, [res.body.secret]);
    endpoints.push({ key: label, webhookId: res.body.webhook_id, receiver, path, createdAt: Date.now(), types });
  }

  // monitors: two of the monitor key's, daily, so the slot in progress runs at once (the scheduled lane)
  const monitors: Traffic['monitors'] = [];
  for (const name of ['a', 'b']) {
    const res = await request('monitors', `${api()}/v1/monitors`, {
      method: 'POST',
      key: keys.monitor!.key,
      body: JSON.stringify({
        name: `soak ${name}`,
        keywords: [1, 2, 3].map((i) => `soak monitor ${name}${i} ${options.seed}`),
        domains: ['merriam-webster.com', '*.wikipedia.org'],
        depth: 10,
        schedule: 'daily',
      }),
    });
    if (res?.status !== 201) throw new Error(`creating a monitor: ${JSON.stringify(res)}`);
    monitors.push({ id: res.body.monitor_id, key: 'monitor' });
  }

  const track = (id: string | undefined, key: string, via: Via, cached: boolean) => {
    if (!id || jobs.has(id)) return;
    jobs.set(id, { id, key, via, acceptedAt: Date.now(), cached });
  };
  const keyword = (what: string) => `soak ${what} ${options.seed}-${++counter}`;
  /** finished /v1 jobs, for reads and for identical repeats (answered from cache) */
  const finished: { id: string; key: string; body: Record<string, unknown> }[] = [];
  const lastBodies = new Map<string, Record<string, unknown>>();

  const submitV1 = async (label: string, body: Record<string, unknown>, via: Via) => {
    const res = await request(`submit ${via}`, `${api()}/v1/search`, {
      method: 'POST',
      key: keys[label]!.key,
      body: JSON.stringify(body),
    });
    if (!res || res.status >= 500) {
      unknownSubmits[label]! += 1;
      return undefined;
    }
    if (res.status === 200 || res.status === 202) {
      const id = res.body?.job_id as string | undefined;
      track(id, label, via, res.body?.cached === true);
      if (id) lastBodies.set(id, body);
      return id;
    }
    return undefined;
  };

  /** watches a few of its own jobs to the end, as a client polls, so reads and repeats have finished jobs */
  const follow = async (label: string, id: string) => {
    for (let i = 0; i < 60 && !stopped; i++) {
      await sleep(2_000);
      const res = await request('poll', `${api()}/v1/search/${id}?output=json`, { key: keys[label]!.key });
      if (res?.status === 200) {
        if (res.body?.search_metadata?.status === 'done') {
          finished.push({ id, key: label, body: lastBodies.get(id) ?? {} });
          if (finished.length > 200) finished.shift();
        }
        return;
      }
    }
  };

  const liveLoop = async () => {
    while (!stopped) {
      const roll = random();
      const done = finished.filter((x) => x.key === 'live');
      if (roll < 0.15 && done.length > 0) {
        // an identical repeat of a finished search: answered from cache, charged nothing
        await submitV1('live', pick(done).body, 'v1_repeat');
      } else if (roll < 0.35) {
        // compat, async: SerpApi's envelope and its id
        const q = keyword('compat');
        const res = await request(
          'compat search',
          `${api()}/search?engine=google&q=${encodeURIComponent(q)}&async=true&api_key=${keys.mcp!.key}`,
        );
        if (!res || res.status >= 500) unknownSubmits.mcp! += 1;
        else if (res.status === 200) track(res.body?.search_metadata?.id, 'mcp', 'compat', false);
      } else {
        // mostly one to three pages; one search in ten is a full hundred, whose pages are fetched and parsed side by
        // side while a fault may end the search early
        const body: Record<string, unknown> = {
          keyword: keyword('live'),
          depth: random() < 0.1 ? 100 : pick([10, 10, 20, 30]),
        };
        if (random() < 0.3) body.location = pick(LOCATIONS);
        const id = await submitV1('live', body, 'v1');
        if (id && random() < 0.3) void follow('live', id);
      }
      await sleep(600 + random() * 1_400);
    }
  };

  const bulkLoop = async () => {
    while (!stopped) {
      const batch = Array.from({ length: 4 }, () => ({ keyword: keyword('bulk'), depth: 10, priority: 'bulk' }));
      await Promise.all(batch.map((b) => submitV1('bulk', b, 'v1_bulk')));
      await sleep(4_000 + random() * 3_000);
    }
  };

  const monitorLoop = async () => {
    await sleep(5_000);
    while (!stopped) {
      const m = pick(monitors);
      const res = await request('monitor run', `${api()}/v1/monitors/${m.id}/runs`, {
        method: 'POST',
        key: keys.monitor!.key,
        body: '{}',
      });
      if (res?.status === 202) for (const j of res.body?.jobs ?? []) track(j.job_id, 'monitor', 'monitor_run', false);
      else if (!res || res.status >= 500) unknownSubmits.monitor! += 3;
      await sleep(20_000 + random() * 10_000);
    }
  };

  const mcpLoop = async () => {
    /**
     * a session of its own on one api; opened again when the api answers 404 for it, as the MCP transport asks a
     * client to (docs/mcp.md): a session lives in the process that opened it, and a cluster's api killed -9 forgets it
     */
    const open = async () => {
      const transport = new StreamableHTTPClientTransport(new URL(`${api()}/mcp`), {
        requestInit: { headers: { 'x-api-key': keys.mcp!.key } },
      });
      const c = new Client({ name: 'soak', version: '1.0.0' });
      await c.connect(transport);
      return c;
    };
    // the SDK's StreamableHTTPError carries the status; the service's 404 says "Session not found"
    const lostSession = (err: unknown) =>
      (err as { code?: unknown }).code === 404 || /session not found/i.test(String(err));
    const mine: string[] = [];
    let client: Client | undefined;
    try {
      while (!stopped) {
        const t0 = performance.now();
        try {
          client ??= await open();
          const r = (await client.callTool(
            { name: 'serp_search', arguments: { keyword: keyword('mcp'), depth: 10, wait: false } },
            undefined,
            { timeout: 30_000 },
          )) as { structuredContent?: Record<string, any>; isError?: boolean };
          answers.push({
            route: 'mcp serp_search',
            status: r.isError ? 0 : 200,
            at: Date.now(),
            ms: performance.now() - t0,
          });
          const id = r.structuredContent?.job_id as string | undefined;
          if (id) {
            track(id, 'mcp', 'mcp', r.structuredContent?.cached === true);
            mine.push(id);
          } else if (r.isError) unknownSubmits.mcp! += 1;
          if (mine.length > 1) {
            await client.callTool({ name: 'serp_get_results', arguments: { job_id: pick(mine) } }, undefined, {
              timeout: 30_000,
            });
          }
          await client.callTool({ name: 'serp_usage', arguments: {} }, undefined, { timeout: 30_000 });
        } catch (err) {
          unknownSubmits.mcp! += 1;
          dropped.push({ route: 'mcp', at: Date.now(), error: String(err).slice(0, 200) });
          if (client === undefined || lostSession(err)) {
            mcpSessionsLost += client === undefined ? 0 : 1;
            await client?.close().catch(() => undefined);
            client = undefined;
          }
        }
        await sleep(6_000 + random() * 6_000);
      }
    } finally {
      await client?.close().catch(() => undefined);
    }
  };

  // The reads are timed in a process of their own (test/soak/reader.mjs), started in a session of its own so that the
  // host's scheduler treats it as the client on another machine it stands for: this process's loop also serves the
  // fake Google, the proxies and the receivers, and timed here a read also measured that loop's work on its answer
  const reader = spawn(process.execPath, [fileURLToPath(new URL('./reader.mjs', import.meta.url))], {
    stdio: ['pipe', 'pipe', 'inherit'],
    detached: true,
  });
  const waiting = new Map<number, (r: { status?: number; ms?: number; timing?: string; error?: string }) => void>();
  let readId = 0;
  createInterface({ input: reader.stdout! }).on('line', (line) => {
    const r = JSON.parse(line) as { id: number; status?: number; ms?: number; timing?: string; error?: string };
    waiting.get(r.id)?.(r);
    waiting.delete(r.id);
  });
  reader.on('exit', () => {
    for (const done of waiting.values()) done({ error: 'the reader exited' });
    waiting.clear();
  });

  /** one read of the mix the idle baseline measured too: a finished result, the key's usage, its monitors */
  const oneRead = async (): Promise<Omit<Read, 'at' | 'harnessLagMs'> | undefined> => {
    const f = finished.length ? finished[Math.floor(random() * finished.length)] : undefined;
    const which = random();
    const [route, url, key] =
      f && which < 0.6
        ? ['read result', `${api()}/v1/search/${f.id}?output=json`, keys[f.key]!.key]
        : which < 0.8
          ? ['read usage', `${api()}/v1/usage`, keys.live!.key]
          : ['read monitors', `${api()}/v1/monitors`, keys.monitor!.key];
    const id = ++readId;
    const r = await new Promise<{ status?: number; ms?: number; timing?: string; error?: string }>((done) => {
      waiting.set(id, done);
      reader.stdin!.write(`${JSON.stringify({ id, url, key })}\n`);
    });
    if (r.error !== undefined || r.status === undefined || r.ms === undefined) {
      dropped.push({ route, at: Date.now(), error: r.error ?? 'no answer' });
      return undefined;
    }
    answers.push({ route, status: r.status, at: Date.now(), ms: r.ms });
    if (r.status !== 200) return undefined;
    return { ms: r.ms, route, ...(r.timing ? { serverTiming: parseServerTiming(r.timing) } : {}) };
  };
  /** a pause of 50 ms between reads; how late it ended */
  const pause = async () => {
    const t0 = performance.now();
    await sleep(50);
    return Math.max(0, performance.now() - t0 - 50);
  };

  const readLoop = async () => {
    let harnessLagMs = 0;
    while (!stopped) {
      const r = await oneRead();
      if (r !== undefined) reads.push({ at: Date.now(), ...r, harnessLagMs });
      harnessLagMs = await pause();
    }
  };

  const replayAtCaps = async () => {
    const hook = endpoints.find((e) => e.key === 'live')!;
    const since = new Date(options.runStartedAt).toISOString();
    const one = async () =>
      (
        await request('replay', `${api()}/v1/webhooks/${hook.webhookId}/replay`, {
          method: 'POST',
          key: keys.live!.key,
          body: JSON.stringify({ since }),
        })
      )?.status ?? 0;
    // the hour's ten at once, then one more: the cap answers it 429
    const statuses = await Promise.all(Array.from({ length: 10 }, one));
    statuses.push(await one());
    replays.push({ at: Date.now(), statuses });
    return statuses;
  };

  return {
    keys,
    jobs,
    endpoints,
    monitors,
    unknownSubmits,
    answers,
    reads,
    dropped,
    replays,
    get mcpSessionsLost() {
      return mcpSessionsLost;
    },
    async run() {
      const loops = [
        ...Array.from({ length: options.concurrency }, () => liveLoop()),
        bulkLoop(),
        monitorLoop(),
        mcpLoop(),
        readLoop(),
      ];
      await Promise.all(loops);
    },
    stop() {
      stopped = true;
    },
    close() {
      reader.stdin!.end();
    },
    async idleReads(count) {
      // a few searches to read, finished before anything else runs
      const ids = await Promise.all(
        [1, 2, 3].map(() => submitV1('live', { keyword: keyword('idle'), depth: 10 }, 'v1')),
      );
      for (const id of ids) if (id) await follow('live', id);
      // the first reads compile the routes' code: not what an idle service answers in
      for (let i = 0; i < 50; i++) await oneRead();
      const out: Read[] = [];
      let harnessLagMs = 0;
      for (let i = 0; i < count; i++) {
        const r = await oneRead();
        if (r !== undefined) out.push({ at: Date.now(), ...r, harnessLagMs });
        harnessLagMs = await pause();
      }
      return out;
    },
    replayAtCaps,
  };
};
