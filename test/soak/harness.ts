import { type FakeGoogle, prepareTroubles } from '../support/fakeGoogle.js';
import {
  checkJobs,
  checkLoop,
  checkReads,
  checkUsage,
  checkWebhooks,
  INVARIANTS,
  type Invariant,
  jobBoundMs,
  loopDelay,
  missingOf,
  overdueJobs,
  type UsageView,
  type WebhookView,
} from './invariants.js';
import { type Journal, openJournal } from './journal.js';
import { buildSchedule, type Fault, GOOGLE_FAULTS, type GoogleFaultKind, scheduleDigest } from './schedule.js';
import {
  ADMIN_TOKEN,
  cpuPressureUs,
  memoryOf,
  type SoakStack,
  startSoakStack,
  threadMemoryOf,
  threadTimesOf,
} from './stack.js';
import { startTraffic, type Traffic } from './traffic.js';

/**
 * The weather machine (docs/operations.md#the-soak): the real service, an adversarial fake Google, proxies and webhook
 * receivers, a seeded schedule of faults, traffic on every lane and surface, and the invariants checked while it runs
 * and at its end. `runSoak` returns the report; scripts/soak.ts prints it, the CI tests (test/soak/*.test.ts) assert
 * each invariant.
 */

export interface SoakOptions {
  minutes: number;
  seed: number;
  cluster: boolean;
  /** live search loops (default 2): the traffic's weight; every other loop is one */
  concurrency?: number;
  /** false: the same traffic without any fault, a baseline to tell what the faults cost (default true) */
  faults?: boolean;
  /** progress lines (default: none) */
  log?: (line: string) => void;
}

export interface FaultOutcome {
  fault: Fault;
  startedAt: number;
  endedAt?: number;
  /** what it did (a process's name, replays' answers) or why it could not be applied */
  detail?: string;
  /** pages it answered (Google's faults and placements) */
  requests?: number;
  /** jobs that met it, by how they ended: done / partial / failed:<kind> / cached / open */
  jobs?: Record<string, number>;
  /** of those jobs, the ones whose page was asked for again after the fault answered it */
  retried?: number;
}

export interface SoakReport {
  seed: number;
  minutes: number;
  mode: 'embedded' | 'cluster';
  /** false for a baseline run without faults */
  withFaults: boolean;
  schedule: string;
  startedAt: string;
  tookS: number;
  faults: FaultOutcome[];
  /** the service's last log lines (warnings and errors), printed when an invariant failed */
  logTail: string;
  /** faults by kind: injected, and the jobs that met them by outcome */
  byKind: Record<string, { injected: number; requests: number; jobs: Record<string, number> }>;
  invariants: Invariant[];
  ok: boolean;
  figures: Record<string, unknown>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const mb = (b: number) => `${(b / 2 ** 20).toFixed(0)} MB`;

/**
 * The caches bounded by design in each process that answers HTTP, by process name: the stored answers' bytes and
 * their bound (`serp_stored_answers_bytes`, docs/operations.md#metrics-and-logs). A process that did not answer is left
 * out (its RSS is then judged whole).
 */
const boundedCaches = async (stack: SoakStack): Promise<Record<string, { used: number; bound: number }>> => {
  const out: Record<string, { used: number; bound: number }> = {};
  for (const p of stack.processes()) {
    if (!p.http || !p.url) continue;
    try {
      const res = await fetch(`${p.url}/metrics`, {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        signal: AbortSignal.timeout(10_000),
      });
      const text = await res.text();
      const value = (state: string) =>
        Number(new RegExp(`^serp_stored_answers_bytes\\{state="${state}"\\} (\\S+)$`, 'm').exec(text)?.[1]);
      const used = value('used');
      const bound = value('bound');
      if (Number.isFinite(used) && Number.isFinite(bound)) out[p.name] = { used, bound };
    } catch {
      // not answering now (a cluster's api killed on purpose): its RSS is judged whole
    }
  }
  return out;
};
const PLACE = 'Chicago, Illinois';

/** how each job a fault met ended */
const outcomeOf = (journal: Journal, jobId: string) => {
  const end = journal.jobs.get(jobId)?.ends[0];
  if (!end) return 'open';
  return end.status === 'failed' ? `failed:${end.kind ?? '?'}` : end.status;
};

const countInto = (into: Record<string, number>, key: string, n = 1) => {
  into[key] = (into[key] ?? 0) + n;
};

/** jobs whose page was answered by the fault: by keyword, alive at the request's moment */
const googleOutcome = (google: FakeGoogle, journal: Journal, f: FaultOutcome) => {
  const from = f.startedAt;
  const to = (f.endedAt ?? Date.now()) + 1_000;
  const hits = google
    .searches()
    .filter((r) => (r.at ?? 0) >= from && (r.at ?? 0) <= to)
    .filter((r) => (f.fault.kind === 'placed_elsewhere' ? r.placed?.at === 'home' : r.trouble !== undefined));
  const byKeyword = new Map<string, typeof hits>();
  for (const r of hits) byKeyword.set(r.query.q ?? '', [...(byKeyword.get(r.query.q ?? '') ?? []), r]);
  const jobs: Record<string, number> = {};
  let retried = 0;
  const all = [...journal.jobs.values()];
  for (const [q, reqs] of byKeyword) {
    const at = reqs[0]!.at ?? 0;
    const met = all.filter(
      (j) => j.keyword === q && j.submittedAt <= at + 1_000 && (j.ends[0]?.at ?? Infinity) >= at - 1_000,
    );
    for (const j of met) countInto(jobs, outcomeOf(journal, j.id));
    const later = google.searches().some((r) => r.query.q === q && (r.at ?? 0) > (reqs.at(-1)!.at ?? 0) && !r.trouble);
    if (later) retried += met.length;
  }
  f.requests = hits.length;
  f.jobs = jobs;
  f.retried = retried;
};

/** any other fault: the jobs alive during it, by how they ended */
const windowOutcome = (journal: Journal, f: FaultOutcome) => {
  const from = f.startedAt;
  const to = f.endedAt ?? from;
  const jobs: Record<string, number> = {};
  for (const j of journal.jobs.values()) {
    if (j.submittedAt <= to && (j.ends[0]?.at ?? Infinity) >= from) countInto(jobs, outcomeOf(journal, j.id));
  }
  f.jobs = jobs;
};

export const runSoak = async (options: SoakOptions): Promise<SoakReport> => {
  const log = options.log ?? (() => undefined);
  const totalMs = options.minutes * 60_000;
  const warmupMs = Math.max(20_000, Math.round(totalMs * 0.15));
  const faultMs = totalMs - warmupMs;
  const cluster = options.cluster;
  const started = Date.now();
  const schedule =
    options.faults === false ? [] : buildSchedule({ seed: options.seed, faultMs, cluster, proxies: 3, receivers: 3 });
  const digest = scheduleDigest(schedule);
  log(
    `soak: seed ${options.seed}, ${options.minutes} min, ${cluster ? 'cluster' : 'embedded'}, ${schedule.length} faults (schedule ${digest})`,
  );
  await prepareTroubles(Object.values(GOOGLE_FAULTS));

  const stack: SoakStack = await startSoakStack({ cluster, proxies: 3, receivers: 3, log: cluster ? undefined : log });
  try {
    return await soakOn(stack, options, { schedule, digest, warmupMs, faultMs, started, log });
  } finally {
    await stack.stop();
  }
};

const soakOn = async (
  stack: SoakStack,
  options: SoakOptions,
  plan: {
    schedule: Fault[];
    digest: string;
    warmupMs: number;
    faultMs: number;
    started: number;
    log: (l: string) => void;
  },
): Promise<SoakReport> => {
  const journal = openJournal(stack.events);
  const traffic: Traffic = await startTraffic(stack, {
    seed: options.seed,
    runStartedAt: plan.started,
    concurrency: options.concurrency ?? 2,
  });
  try {
    return await soakWith(stack, options, plan, journal, traffic);
  } finally {
    traffic.close();
  }
};

const soakWith = async (
  stack: SoakStack,
  options: SoakOptions,
  plan: Parameters<typeof soakOn>[2],
  journal: ReturnType<typeof openJournal>,
  traffic: Traffic,
): Promise<SoakReport> => {
  const { schedule, warmupMs, faultMs, log } = plan;
  const cluster = options.cluster;
  log('soak: measuring idle reads');
  const pressure = (from: { at: number; us: number | undefined }) => {
    const us = cpuPressureUs();
    return us === undefined || from.us === undefined ? undefined : (us - from.us) / 1000 / (Date.now() - from.at);
  };
  const idleFrom = { at: Date.now(), us: cpuPressureUs() };
  const idle = await traffic.idleReads(500);
  const idlePressure = pressure(idleFrom);

  // samplers: RSS of every service process, and the live check of the jobs against their bounds
  const rss: { at: number; byName: Record<string, number>; anon: number; file: number }[] = [];
  const httpPids = new Map<number, string>();
  const overdueSeen = new Map<string, string>();
  const sample = () => {
    const byName: Record<string, number> = {};
    let anon = 0;
    let file = 0;
    for (const p of stack.processes()) {
      const m = memoryOf(p.pid);
      if (m !== undefined) {
        byName[p.name] = m.rss;
        anon += m.anon;
        file += m.file;
      }
      if (p.http) httpPids.set(p.pid, p.name);
    }
    rss.push({ at: Date.now(), byName, anon, file });
    return byName;
  };
  const rssTimer = setInterval(sample, 2_000);
  /**
   * each process's anonymous memory by who holds it: its threads' V8 heaps, the external memory (buffers) their
   * isolates account for, and the rest, the C allocator's (malloc arenas: SQLite, zlib, Node's own), with the
   * file-backed part beside (docs/operations.md#the-soak)
   */
  const splitOf = () => {
    const out: Record<string, { heaps: number; external: number; rest: number; file: number }> = {};
    for (const p of stack.processes()) {
      const m = memoryOf(p.pid);
      const t = threadMemoryOf(stack.probeDir, p.pid, Date.now());
      if (m && t)
        out[p.name] = { heaps: t.heaps, external: t.external, rest: m.anon - t.heaps - t.external, file: m.file };
    }
    return out;
  };
  let checking = false;
  const checkTimer = setInterval(async () => {
    if (checking) return;
    checking = true;
    try {
      await journal.catchUp();
      for (const j of overdueJobs(journal, Date.now(), cluster)) {
        if (!overdueSeen.has(j.id)) {
          overdueSeen.set(
            j.id,
            `${j.id} open ${((Date.now() - j.submittedAt) / 1000).toFixed(0)} s (${j.lane}, depth ${j.depth})`,
          );
          log(`soak: job ${j.id} past its bound while running`);
        }
      }
    } catch (err) {
      // the log is unreachable for a moment (a NATS node restarting): the next check reads on
      log(`soak: reading the log: ${String(err).slice(0, 200)}`);
    } finally {
      checking = false;
    }
  }, 5_000);

  const trafficFrom = Date.now();
  log('soak: traffic starts (warm-up)');
  const running = traffic.run();
  await sleep(warmupMs);
  const warm = sample();
  const warmAt = rss.length - 1;
  const warmSplit = splitOf();
  const warmCaches = await boundedCaches(stack);
  log(
    `soak: warm-up over, RSS ${(Object.values(warm).reduce((a, b) => a + b, 0) / 2 ** 20).toFixed(0)} MB; faults start`,
  );

  // the fault phase: each fault at its moment, undone after its duration
  const faultStart = Date.now();
  const faultFrom = { at: faultStart, us: cpuPressureUs() };
  const threadsBefore = new Map(stack.processes().map((p) => [p.pid, threadTimesOf(p.pid)]));
  const selfBefore = process.cpuUsage();
  const outcomes: FaultOutcome[] = [];
  const apply = async (f: Fault) => {
    await sleep(Math.max(0, faultStart + f.at - Date.now()));
    const o: FaultOutcome = { fault: f, startedAt: Date.now() };
    outcomes.push(o);
    log(
      `soak: +${(f.at / 1000).toFixed(0)} s ${f.kind}${f.share ? ` (share ${f.share})` : ''}${f.target !== undefined ? ` #${f.target}` : ''} for ${(f.durationMs / 1000).toFixed(0)} s`,
    );
    try {
      if (f.kind in GOOGLE_FAULTS) {
        stack.google.setMode({ trouble: GOOGLE_FAULTS[f.kind as GoogleFaultKind], share: f.share });
        await sleep(f.durationMs);
        stack.google.setMode({});
      } else if (f.kind === 'placed_elsewhere') {
        const address = stack.proxies.addresses[f.target ?? 0]!;
        stack.google.setPlacement({ homes: { [address]: { name: PLACE, share: 1 } } });
        o.detail = `proxy ${address} placed in ${PLACE}`;
        await sleep(f.durationMs);
        stack.google.setPlacement({});
      } else if (f.kind === 'proxy_down') {
        await stack.proxies.down(f.target ?? 0);
        await sleep(f.durationMs);
        await stack.proxies.up(f.target ?? 0);
      } else if (f.kind === 'receiver_hang' || f.kind === 'receiver_500') {
        const r = stack.receivers[f.target ?? 0]!;
        const before = r.received.length;
        r.setAnswer(f.kind === 'receiver_hang' ? () => 'hang' : () => ({ status: 500 }));
        await sleep(f.durationMs);
        r.setAnswer(() => ({ status: 204 }));
        o.detail = `${r.received.length - before} attempts met it`;
      } else if (f.kind === 'receiver_gone') {
        const r = stack.receivers[f.target ?? 0]!;
        await r.down();
        await sleep(f.durationMs);
        await r.up();
      } else if (f.kind === 'replay_at_caps') {
        const statuses = await traffic.replayAtCaps();
        o.detail = `replays answered ${statuses.join(',')}`;
      } else if (f.kind === 'nats_restart') {
        o.detail = `restarted ${await stack.restartNats(f.target ?? 0, f.durationMs)}`;
      } else {
        const role = f.kind.replace('kill_', '') as 'crawler' | 'dispatcher' | 'api';
        o.detail = `killed -9 and restarted ${await stack.killRole(role, f.target ?? 0, f.durationMs)}`;
      }
    } catch (err) {
      o.detail = `could not apply: ${String(err).slice(0, 300)}`;
    }
    o.endedAt = Date.now();
  };
  await Promise.all([...schedule.map(apply), sleep(faultMs)]);
  const faultEnd = Date.now();
  const faultPressure = pressure(faultFrom);
  const selfCpu = process.cpuUsage(selfBefore);
  const cpuLines: string[] = [`harness ${((selfCpu.user + selfCpu.system) / 1e6).toFixed(1)} s`];
  for (const p of stack.processes()) {
    const before = threadsBefore.get(p.pid);
    if (!before) continue;
    const rows = [...threadTimesOf(p.pid)].map(([tid, t]) => ({
      tid,
      name: t.name,
      nice: t.nice,
      s: (t.ticks - (before.get(tid)?.ticks ?? 0)) / 100,
    }));
    rows.sort((a, b) => b.s - a.s);
    cpuLines.push(
      `${p.name}: ${rows
        .filter((r) => r.s >= 0.5)
        .map((r) => `${r.tid === p.pid ? 'main' : r.name}(nice ${r.nice}) ${r.s.toFixed(1)} s`)
        .join(', ')}`,
    );
  }
  log(`soak: CPU over the faults: ${cpuLines.join('; ')}`);

  log('soak: faults over; traffic stops, the drain begins');
  traffic.stop();
  await Promise.race([running, sleep(60_000)]);
  stack.google.setMode({});
  stack.google.setPlacement({});
  for (let i = 0; i < stack.proxies.addresses.length; i++) await stack.proxies.up(i);
  for (const r of stack.receivers) r.setAnswer(() => ({ status: 204 }));

  // the drain: every job ends (or its bound passes) and every webhook message arrives (or 120 s pass)
  const drainStart = Date.now();
  const webhookWaitMs = 120_000;
  const key = (label: string) => traffic.keys[label]!;
  const webhookViews = (): WebhookView[] =>
    traffic.endpoints.map((e) => {
      const keyId = key(e.key).keyId;
      const expected = new Set<string>();
      for (const j of journal.jobs.values()) {
        const end = j.ends[0];
        if (j.keyId !== keyId || !end || end.at < e.createdAt) continue;
        expected.add(`${end.status === 'failed' ? 'search.failed' : 'search.completed'} ${j.id}`);
      }
      if (e.types.includes('monitor.run_completed')) {
        const mine = new Set(traffic.monitors.filter((m) => m.key === e.key).map((m) => m.id));
        for (const [run, monitor] of journal.runsCompleted)
          if (mine.has(monitor)) expected.add(`monitor.run_completed ${run}`);
      }
      const r = stack.receivers[e.receiver]!;
      const got = r.received.filter((x) => x.path === e.path);
      const received = new Set(
        got.flatMap((x) => (x.payload ? [`${x.payload.type} ${x.payload.data.job_id ?? x.payload.data.run_id}`] : [])),
      );
      return {
        label: e.key,
        path: e.path,
        expected,
        received,
        unverified: got.filter((x) => !x.payload).length,
        requests: got.length,
      };
    });
  for (;;) {
    await journal.catchUp().catch(() => undefined);
    const open = [...journal.jobs.values()].filter((j) => j.ends.length === 0);
    const pastBound = open.every((j) => Date.now() - j.submittedAt > jobBoundMs(j.depth, cluster));
    const missing = webhookViews().reduce((a, v) => a + missingOf(v).length, 0);
    const webhooksDone = missing === 0 || Date.now() - drainStart > webhookWaitMs;
    if ((open.length === 0 || pastBound) && webhooksDone) break;
    if ((Date.now() - drainStart) % 10_000 < 2_000)
      log(`soak: draining: ${open.length} jobs open, ${missing} webhook messages not yet arrived`);
    await sleep(2_000);
  }
  const drainTook = Date.now() - drainStart;
  log(`soak: drained in ${(drainTook / 1000).toFixed(0)} s`);
  clearInterval(checkTimer);
  clearInterval(rssTimer);

  // what each api's /metrics says of the projection and the queue once drained (evidence when a job reads running)
  const lagLines: string[] = [];
  for (const url of stack.apiUrls()) {
    try {
      const res = await fetch(`${url}/metrics`, {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        signal: AbortSignal.timeout(10_000),
      });
      const text = await res.text();
      const wanted = text.split('\n').filter((l) => /^serp_(projection_lag_positions|queue_depth)\b/.test(l));
      lagLines.push(`${url}: ${wanted.join(', ') || `no figures (${res.status})`}`);
    } catch (err) {
      lagLines.push(`${url}: /metrics unanswered (${String(err).slice(0, 100)})`);
    }
  }

  // the monitor key's scheduled searches: from its monitors' history, as a user reads them
  const api = () => stack.apiUrls()[0]!;
  const getJson = (path: string, k: string) => getJsonOn(api(), path, k);
  const getJsonOn = async (url: string, path: string, k: string) => {
    try {
      const res = await fetch(`${url}${path}`, { headers: { 'x-api-key': k }, signal: AbortSignal.timeout(30_000) });
      return { status: res.status, body: (await res.json()) as any };
    } catch {
      return undefined;
    }
  };
  for (const m of traffic.monitors) {
    const h = await getJson(`/v1/monitors/${m.id}/history`, key(m.key).key);
    for (const p of h?.body?.points ?? []) {
      if (p.job_id && !traffic.jobs.has(p.job_id))
        traffic.jobs.set(p.job_id, { id: p.job_id, key: m.key, via: 'monitor_slot', acceptedAt: 0, cached: false });
    }
  }

  // usage: each job the harness knows of, charged by the docs' rules from what the API says of it now. Every api is
  // asked (a cluster has two): a job the log has ended may read `running` for a moment until that api's read model
  // has it (docs/api.md), so a 202 is read again for up to 60 s in all; one still `running` then is a job that never
  // ended for its user, evidence for the jobs' invariant. Its charge is then judged by how the log ended it.
  const usageViews: UsageView[] = [];
  const stillRunning: string[] = [];
  const readsUntil = Date.now() + 60_000;
  for (const label of Object.keys(traffic.keys)) {
    const k = key(label);
    let expected = 0;
    const unread: string[] = [];
    for (const j of traffic.jobs.values()) {
      if (j.key !== label) continue;
      // docs/locations.md#the-retry: a search still placed elsewhere after its retry ends `partial` with a wrong-place
      // verdict, and is not charged, as a failed one is not
      let answer: { status: string; cached: boolean; elsewhere: boolean } | undefined;
      for (const url of stack.apiUrls()) {
        const read = () => getJsonOn(url, `/v1/search/${j.id}?output=json`, k.key);
        let r = await read();
        while (r?.status !== 200 && Date.now() < readsUntil) {
          await sleep(500);
          r = await read();
        }
        const status = r?.body?.search_metadata?.status ?? r?.body?.status;
        if (r?.status === 200 && status) {
          const verdict = r.body?.search_metadata?.location_check?.status;
          answer ??= {
            status,
            cached: r.body?.search_metadata?.cached === true,
            elsewhere: status === 'partial' && ['mismatched', 'region_only', 'country_only'].includes(verdict),
          };
          continue;
        }
        const ended = journal.jobs.get(j.id)?.ends[0];
        stillRunning.push(
          `${j.id} (${label}, crawled by ${journal.jobs.get(j.id)?.worker ?? 'none'}) on ${url} answered ${r?.status ?? 'nothing'} ${Math.round((Date.now() - (ended?.at ?? j.acceptedAt)) / 1000)} s after ${ended ? `the log ended it ${ended.status} at ${new Date(ended.at).toISOString()}` : 'it was accepted (the log has no end)'}`,
        );
      }
      if (!answer) {
        const ended = journal.jobs.get(j.id)?.ends[0];
        if (!ended) {
          unread.push(j.id);
          continue;
        }
        answer = {
          status: ended.status,
          cached: ended.status === 'cached',
          elsewhere: ended.kind === 'placed_elsewhere',
        };
      }
      if (!(j.cached || answer.cached) && answer.status !== 'failed' && !answer.elsewhere) expected += 1;
    }
    // a failed job's release is appended after it reads failed (docs/api.md): read usage until it settles on the log's
    const reserved = [...(journal.reserved.get(k.keyId)?.values() ?? [])].reduce((a, b) => a + b, 0);
    const released = [...(journal.released.get(k.keyId)?.values() ?? [])].reduce((a, b) => a + b, 0);
    let used: number | undefined;
    for (let i = 0; i < 30; i++) {
      used = (await getJson('/v1/usage', k.key))?.body?.used_this_month;
      if (used === reserved - released) break;
      await sleep(500);
      await journal.catchUp().catch(() => undefined);
    }
    usageViews.push({ label, keyId: k.keyId, used, expected, unknown: traffic.unknownSubmits[label] ?? 0, unread });
  }

  // RSS after the drain, over the processes that ran from the warm-up to the end (a restarted one starts afresh)
  const end = sample();
  const endSplit = splitOf();
  const endCaches = await boundedCaches(stack);
  const steady = Object.keys(warm).filter((n) => !stack.restarted.has(n) && end[n] !== undefined);
  const warmSum = steady.reduce((a, n) => a + warm[n]!, 0);
  const endSum = steady.reduce((a, n) => a + end[n]!, 0);
  const peak = Math.max(...rss.map((s) => Object.values(s.byName).reduce((a, b) => a + b, 0)));
  const rawDrift = warmSum > 0 ? endSum / warmSum - 1 : Number.NaN;
  // A cache bounded by design fills after a start whatever the length of the warm-up: its growth since the warm-up,
  // read from the service's own gauge, is told apart from the rest, and judged against its bound instead (it may not
  // pass it). A process whose gauge could not be read either time is judged whole.
  const cacheGrowth = steady.reduce((a, n) => {
    const w = warmCaches[n];
    const e = endCaches[n];
    return w && e ? a + Math.max(0, e.used - w.used) : a;
  }, 0);
  const overBound = steady.filter((n) => endCaches[n] && endCaches[n]!.used > endCaches[n]!.bound);
  const cacheLine = steady
    .filter((n) => warmCaches[n] && endCaches[n])
    .map((n) => `${n} ${mb(warmCaches[n]!.used)} -> ${mb(endCaches[n]!.used)} of its ${mb(endCaches[n]!.bound)} bound`)
    .join(', ');
  const drift = warmSum > 0 ? (endSum - cacheGrowth) / warmSum - 1 : Number.NaN;
  const split = steady.filter((n) => warmSplit[n] && endSplit[n]);
  const splitSum = (from: typeof warmSplit, k: 'heaps' | 'external' | 'rest' | 'file') =>
    split.reduce((a, n) => a + from[n]![k], 0);
  const splitLine = split.length
    ? `; by holder, after warm-up -> at the end: V8 heaps ${mb(splitSum(warmSplit, 'heaps'))} -> ${mb(splitSum(endSplit, 'heaps'))}, their external buffers ${mb(splitSum(warmSplit, 'external'))} -> ${mb(splitSum(endSplit, 'external'))}, the rest of anonymous memory (the C allocator's) ${mb(splitSum(warmSplit, 'rest'))} -> ${mb(splitSum(endSplit, 'rest'))}, file-backed ${mb(splitSum(warmSplit, 'file'))} -> ${mb(splitSum(endSplit, 'file'))}`
    : '';
  const rssOk = steady.length > 0 && drift <= 0.15 && overBound.length === 0;
  const rssInvariant: Invariant = {
    name: INVARIANTS[4],
    ok: rssOk,
    summary: `${mb(endSum)} at the end against ${mb(warmSum)} after warm-up (${(rawDrift * 100).toFixed(1)} %), of which the stored answers (bounded by design) grew ${mb(cacheGrowth)}${cacheLine ? ` (${cacheLine})` : ''}: ${(drift * 100).toFixed(1)} % without them, over ${steady.join(', ') || 'no process that ran throughout'}; peak ${mb(peak)}${splitLine}`,
    evidence:
      steady.length === 0
        ? ['every process was restarted: no RSS to compare']
        : rssOk
          ? []
          : [
              ...overBound.map(
                (n) => `${n}: stored answers ${mb(endCaches[n]!.used)} past their bound ${mb(endCaches[n]!.bound)}`,
              ),
              `RSS grew ${(drift * 100).toFixed(1)} % besides the bounded caches (all processes, anonymous / file-backed: ${mb(rss[warmAt]?.anon ?? 0)} / ${mb(rss[warmAt]?.file ?? 0)} after warm-up, ${mb(rss.at(-1)?.anon ?? 0)} / ${mb(rss.at(-1)?.file ?? 0)} at the end); samples (MB): ${rss
                .filter((_, i) => i % 5 === 0)
                .map(
                  (s) =>
                    `${((s.at - plan.started) / 1000).toFixed(0)}s=${(Object.values(s.byName).reduce((a, b) => a + b, 0) / 2 ** 20).toFixed(0)}`,
                )
                .join(' ')}`,
            ],
  };

  const exits: Invariant = {
    name: INVARIANTS[0],
    ok: stack.unplanned.length === 0,
    summary: `${stack.unplanned.length} unplanned exits`,
    evidence: stack.unplanned.map(
      (e) => `${e.name} exited (code ${e.code}, signal ${e.signal}) at ${new Date(e.at).toISOString()}:\n${e.tail}`,
    ),
  };

  const fivexx = traffic.answers.filter((a) => a.status >= 500 && !(cluster && a.status === 503));
  const errors: Invariant = {
    name: INVARIANTS[7],
    ok: fivexx.length === 0,
    summary: `${traffic.answers.length} answers, ${fivexx.length} 5xx${cluster ? ` (besides ${traffic.answers.filter((a) => a.status === 503).length} 503s while a node or process was down)` : ''}; ${traffic.dropped.length} requests got no answer`,
    evidence: fivexx.slice(0, 20).map((a) => `${a.route} answered ${a.status} at ${new Date(a.at).toISOString()}`),
  };

  await journal.catchUp().catch(() => undefined);
  const duringReads = traffic.reads.filter((r) => r.at >= faultStart && r.at <= faultEnd);
  const invariants: Invariant[] = [
    exits,
    checkJobs(journal, traffic, cluster, overdueSeen, stillRunning, lagLines),
    checkUsage(journal, usageViews),
    checkWebhooks(webhookViews(), webhookWaitMs / 1000),
    rssInvariant,
    checkLoop(loopDelay(stack.probeDir, httpPids, trafficFrom, 10_000)),
    checkReads(idle, duringReads, { idle: idlePressure, during: faultPressure }),
    errors,
  ];

  for (const o of outcomes) {
    if (o.fault.kind in GOOGLE_FAULTS || o.fault.kind === 'placed_elsewhere') googleOutcome(stack.google, journal, o);
    else windowOutcome(journal, o);
  }
  const byKind: SoakReport['byKind'] = {};
  for (const o of outcomes) {
    const k = byKind[o.fault.kind] ?? { injected: 0, requests: 0, jobs: {} };
    byKind[o.fault.kind] = k;
    k.injected += 1;
    k.requests += o.requests ?? 0;
    for (const [outcome, n] of Object.entries(o.jobs ?? {})) countInto(k.jobs, outcome, n);
  }

  const answered: Record<string, number> = {};
  for (const a of traffic.answers) countInto(answered, `${a.route} ${a.status}`);
  return {
    seed: options.seed,
    minutes: options.minutes,
    mode: cluster ? 'cluster' : 'embedded',
    withFaults: options.faults !== false,
    schedule: plan.digest,
    startedAt: new Date(plan.started).toISOString(),
    tookS: Math.round((Date.now() - plan.started) / 1000),
    faults: outcomes.sort((a, b) => a.fault.id - b.fault.id),
    logTail: stack.logTail(80),
    byKind,
    invariants,
    ok: invariants.every((i) => i.ok),
    figures: {
      warmupS: warmupMs / 1000,
      faultS: faultMs / 1000,
      drainS: Math.round(drainTook / 1000),
      events: journal.events,
      jobs: journal.jobs.size,
      googleRequests: stack.google.searches().length,
      proxies: stack.proxies.stats(),
      answers: answered,
      dropped: traffic.dropped.length,
      replays: traffic.replays,
      mcpSessionsLost: traffic.mcpSessionsLost,
      metricsAfterDrain: lagLines,
      cpuOverFaults: cpuLines,
      cpuPressure: { idle: idlePressure, faults: faultPressure },
    },
  };
};

/** the report as a person reads it: the invariants first, then the faults by kind and what became of them */
export const formatReport = (r: SoakReport): string => {
  const lines: string[] = [];
  lines.push(
    `soak ${r.ok ? 'PASSED' : 'FAILED'}: seed ${r.seed}, ${r.minutes} min, ${r.mode}${r.withFaults ? '' : ' without faults'}, schedule ${r.schedule}, started ${r.startedAt}, took ${r.tookS} s`,
  );
  lines.push('', 'invariants:');
  for (const i of r.invariants) {
    lines.push(`  ${i.ok ? 'ok  ' : 'FAIL'} ${i.name}: ${i.summary}`);
    for (const e of i.evidence.slice(0, 15)) lines.push(`         ${e.replace(/\n/g, '\n         ')}`);
    if (i.evidence.length > 15) lines.push(`         … and ${i.evidence.length - 15} more`);
  }
  lines.push('', 'faults by kind (injected; pages answered; jobs that met them, by how they ended):');
  for (const [kind, k] of Object.entries(r.byKind).sort()) {
    const jobs = Object.entries(k.jobs)
      .sort()
      .map(([o, n]) => `${o} ${n}`)
      .join(', ');
    lines.push(
      `  ${kind.padEnd(16)} ${String(k.injected).padStart(2)}x${k.requests ? `, ${k.requests} pages` : ''}: ${jobs || 'no job met it'}`,
    );
  }
  lines.push('', 'schedule:');
  for (const o of r.faults) {
    const f = o.fault;
    lines.push(
      `  #${String(f.id).padStart(2)} +${(f.at / 1000).toFixed(0).padStart(3)} s ${f.kind}${f.share ? ` ${f.share}` : ''}${f.target !== undefined ? ` #${f.target}` : ''} ${(f.durationMs / 1000).toFixed(0)} s${o.detail ? `: ${o.detail}` : ''}${o.retried ? `; ${o.retried} jobs asked again` : ''}`,
    );
  }
  const fig = r.figures;
  lines.push(
    '',
    `figures: warm-up ${fig.warmupS} s, faults ${fig.faultS} s, drain ${fig.drainS} s; ${fig.jobs} jobs, ${fig.events} events, ${fig.googleRequests} Google requests; ${fig.dropped} requests without an answer; ${fig.mcpSessionsLost} MCP sessions opened again after an api forgot them`,
  );
  if (Array.isArray(fig.cpuOverFaults)) lines.push(`CPU over the faults, by thread: ${fig.cpuOverFaults.join('; ')}`);
  if (!r.ok)
    lines.push(
      '',
      `to run it again: npm run soak -- --minutes ${r.minutes} --seed ${r.seed}${r.mode === 'cluster' ? ' --cluster' : ''}${r.withFaults ? '' : ' --no-faults'}`,
    );
  return lines.join('\n');
};
