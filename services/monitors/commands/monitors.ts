import { randomBytes } from 'node:crypto';
import type { z } from 'zod';
import { type MonitorDefinition, type MonitorSearch, streams } from '../../../contracts/events.js';
import {
  type AlertResponse,
  type CreateMonitorInput,
  DEFAULT_CTR_CURVE,
  type MonitorAlertsConfig,
  type MonitorResponse,
  type PatchMonitorBody,
} from '../../../contracts/monitors.js';
import { pagesFor } from '../../../contracts/search.js';
import { DomainError, errorCodes } from '../../../domain/kernel/errors.js';
import { ABANDONED_AFTER_MS, keyLimitsDecider } from '../../../domain/keyLimits/keyLimits.js';
import { manualRunId, runTimeOf } from '../../../domain/monitor/ids.js';
import { type MonitorSettings, monitorDecider } from '../../../domain/monitor/monitor.js';
import { monitorRunDecider, plannedJobs, runRecord } from '../../../domain/monitor/monitorRun.js';
import { pacing, type RecordedSchedule, scheduleProblem } from '../../../domain/monitor/schedule.js';
import type { ApiKeyDoc } from '../../../projections/apiKeys/apiKeys.js';
import type { ReadModelQueries } from '../../../projections/index.js';
import type { AlertDoc } from '../../../projections/monitors/alerts.js';
import type { MonitorDoc } from '../../../projections/monitors/monitors.js';
import { type Config, defaultTiers } from '../../config/config.js';
import { capacityWarnings } from '../../fairShare/demand.js';
import type { CommandContext, CommandHandler } from '../../ports/commandHandler.js';
import type { MonitorVersions } from './monitorVersions.js';

/**
 * A tier named nowhere in the configuration (a key minted under an older SERP_TIERS) gets the shipped free tier's
 * limits.
 */
const FALLBACK = defaultTiers.free;

const limitError = (message: string) => new DomainError(errorCodes.monitorLimit, message);
const invalid = (message: string) => new DomainError(errorCodes.monitorInvalid, message);

const recordedSchedule = (s: CreateMonitorInput['schedule']): RecordedSchedule =>
  typeof s === 'string' ? s : { cron: s.cron, timezone: s.timezone };

export const searchOf = (b: Partial<MonitorSearch> & { device: MonitorSearch['device'] }): MonitorSearch => {
  const out: MonitorSearch = { device: b.device };
  for (const k of ['location', 'uule', 'lat', 'lon', 'radius', 'gl', 'hl', 'engine_domain'] as const) {
    if (b[k] !== undefined) (out as Record<string, unknown>)[k] = b[k];
  }
  return out;
};

/** an alert as `GET /v1/monitors/{id}/alerts` and the dashboard answer it (docs/rank-tracking.md#alerts) */
export const alertView = (a: AlertDoc): AlertResponse => ({
  alert_id: a.alertId,
  run_id: a.runId,
  kind: a.kind,
  keyword: a.keyword ?? null,
  domain: a.domain ?? null,
  top: a.top ?? null,
  feature: a.feature ?? null,
  competitor: a.competitor ?? null,
  from_position: a.fromPosition ?? null,
  to_position: a.toPosition ?? null,
  from_url: a.fromUrl ?? null,
  to_url: a.toUrl ?? null,
  failures: a.failures ?? null,
  at: a.at,
  raised_at: a.raisedAt,
});

/** every field named, each possibly undefined: building one, the compiler asks for a field added to `T` */
type Complete<T> = { [K in keyof Required<T>]: K extends keyof T ? T[K] | undefined : never };

/**
 * What `POST /v1/monitors` creates: every field of the definition (contracts/events.ts) from the body, so a field added
 * there is asked for here, then of `CreateMonitorBody`. Unset ones are left out when recorded.
 */
const definitionOf = (
  monitorId: string,
  keyId: string,
  body: CreateMonitorInput,
  schedule: RecordedSchedule,
): MonitorDefinition => {
  const definition: Complete<MonitorDefinition> = {
    monitorId,
    keyId,
    name: body.name,
    keywords: body.keywords,
    domains: body.domains,
    search: searchOf(body),
    depth: body.depth,
    schedule,
    ctrCurve: body.ctr_curve,
    backfill: body.backfill,
    alerts: body.alerts,
    pixelPositions: body.pixel_positions,
  };
  return definition as MonitorDefinition;
};

/**
 * What `PATCH /v1/monitors/{id}` sets: every setting a change records (`MonitorChanged`, domain/monitor/monitor.ts),
 * so a setting added there is asked for here, then of `PatchMonitorBody`. Unset ones change nothing.
 */
const settingsOf = (body: PatchMonitorBody, schedule: RecordedSchedule | undefined): MonitorSettings => {
  const settings: Complete<MonitorSettings> = {
    name: body.name,
    schedule,
    paused: body.paused,
    depth: body.depth,
    ctrCurve: body.ctr_curve,
    alerts: body.alerts,
    pixelPositions: body.pixel_positions,
  };
  return settings;
};

type MonitorAnswer = z.infer<typeof MonitorResponse>;
type Answered<Names extends { [K in keyof MonitorDefinition]-?: keyof MonitorAnswer | 'never shown' }> = Names;
/**
 * How each field of the definition is answered (`MonitorResponse`): a field added to the definition fails to compile
 * here until it has its name in the answer (then `view` is asked for it), or is said never to be shown.
 */
export type AnswerNames = Answered<{
  monitorId: 'monitor_id';
  keyId: 'never shown';
  name: 'name';
  keywords: 'keywords';
  domains: 'domains';
  search: 'targeting';
  depth: 'depth';
  schedule: 'schedule';
  ctrCurve: 'ctr_curve';
  backfill: 'backfill';
  alerts: 'alerts';
  pixelPositions: 'pixel_positions';
}>;

/**
 * The api's side of rank tracking (docs/rank-tracking.md): create, change, delete and run monitors of a key. Writes
 * answer once their events are in this process's read models, so the next read sees them.
 */
export const createMonitorService = (deps: {
  queries: ReadModelQueries;
  handle: CommandHandler;
  projected(position: number): Promise<void>;
  tiers: Config['tiers'];
  /** a monitor's keywords at a version of its stream: what a run references */
  versions: MonitorVersions;
  /** SERP_MONITOR_SPREAD_MAX_S in ms: how runs are spread (capacity warnings plan with it) */
  spreadMaxMs: number;
  now?: () => Date;
}) => {
  const { queries, handle } = deps;
  const now = () => deps.now?.() ?? new Date();
  const limitsOf = (key: ApiKeyDoc) => deps.tiers[key.tier] ?? FALLBACK;
  const settle = async (position: number | undefined) => {
    if (position !== undefined) await deps.projected(position);
  };
  const owned = (key: ApiKeyDoc, monitorId: string): MonitorDoc => {
    const doc = queries.monitors.byId(monitorId);
    if (!doc || doc.keyId !== key.keyId) throw new DomainError(errorCodes.monitorNotFound, 'monitor not found');
    return doc;
  };
  const freeLimit = (key: ApiKeyDoc, monitorId: string, reason: string, ctx: CommandContext) =>
    handle(
      streams.keyLimits(key.keyId),
      keyLimitsDecider,
      { type: 'Free', keyId: key.keyId, kind: 'monitor', id: monitorId, reason, now: now().toISOString() },
      ctx,
    );
  const checkSchedule = (s: RecordedSchedule) => {
    const problem = scheduleProblem(s, now());
    if (problem) throw invalid(problem);
  };

  return {
    owned,
    /**
     * what a monitor just created or changed would leave the fleet short of (docs/fleet.md#capacity-against-demand):
     * it is created all the same, and told
     */
    warnings(doc: MonitorDoc): string[] {
      if (doc.paused) return [];
      const schedule = queries.monitors.scheduleOf(doc.monitorId);
      return capacityWarnings(
        queries,
        {
          monitorId: doc.monitorId,
          schedule: doc.schedule,
          pagesPerRun: doc.keywords.length * pagesFor(doc.depth),
          ...(schedule?.nextSlot ? { nextSlot: schedule.nextSlot } : {}),
        },
        now(),
        deps.spreadMaxMs,
      );
    },
    /** the monitor with its next slot, as the routes answer it */
    view(doc: MonitorDoc): Omit<MonitorAnswer, 'warnings'> {
      const schedule = queries.monitors.scheduleOf(doc.monitorId);
      return {
        monitor_id: doc.monitorId,
        name: doc.name,
        keywords: doc.keywords,
        domains: doc.domains,
        targeting: doc.search,
        depth: doc.depth,
        schedule: doc.schedule,
        ctr_curve: doc.ctrCurve ?? [...DEFAULT_CTR_CURVE],
        paused: doc.paused,
        created_at: doc.createdAt,
        updated_at: doc.updatedAt,
        last_run_at: doc.lastRunAt ?? null,
        next_run_at: doc.paused ? null : (schedule?.nextSlot ?? null),
        backfill: doc.backfill,
        // recorded as validated: the features a monitor was created with are RANK_FEATURES
        alerts: (doc.alerts ?? null) as MonitorAlertsConfig | null,
        pixel_positions: doc.pixelPositions === true,
      };
    },

    /** a monitor's alerts between two instants (ms; 0 and beyond year 9999: unbounded), oldest first */
    alerts(monitorId: string, from: number, to: number) {
      const iso = (ms: number) => new Date(ms).toISOString();
      return queries.monitors
        .alertsOf(monitorId, from > 0 ? iso(from) : undefined, to < 253402300800000 ? iso(to) : undefined)
        .map(alertView);
    },

    async create(key: ApiKeyDoc, body: CreateMonitorInput, ctx: CommandContext = {}) {
      const limits = limitsOf(key);
      if (body.keywords.length > limits.keywordsPerMonitor) {
        throw limitError(
          `the ${key.tier} tier allows ${limits.keywordsPerMonitor} keywords per monitor; this one has ${body.keywords.length}`,
        );
      }
      const schedule = recordedSchedule(body.schedule);
      checkSchedule(schedule);
      const monitorId = `mon_${randomBytes(12).toString('hex')}`;
      // taken on the key's limits stream first: parallel creates are decided one after the other
      await handle(
        streams.keyLimits(key.keyId),
        keyLimitsDecider,
        {
          type: 'Take',
          keyId: key.keyId,
          kind: 'monitor',
          id: monitorId,
          limit: limits.monitors,
          current: queries.monitors.countOfKey(key.keyId),
          exists: (id) => queries.monitors.byId(id) !== undefined,
          refusal: (count) =>
            `the ${key.tier} tier allows ${limits.monitors} monitors per key and this key has ${count}: delete one first`,
          now: now().toISOString(),
        },
        ctx,
      );
      const res = await handle(
        streams.monitor(monitorId),
        monitorDecider,
        { type: 'CreateMonitor', ...definitionOf(monitorId, key.keyId, body, schedule), now: now().toISOString() },
        { ...ctx, newStream: true },
      ).catch(async (err) => {
        await freeLimit(key, monitorId, 'abandoned', ctx);
        throw err;
      });
      await settle(res.position);
      return owned(key, monitorId);
    },

    async change(key: ApiKeyDoc, monitorId: string, body: PatchMonitorBody, ctx: CommandContext = {}) {
      owned(key, monitorId);
      const schedule = body.schedule ? recordedSchedule(body.schedule) : undefined;
      if (schedule) checkSchedule(schedule);
      const res = await handle(
        streams.monitor(monitorId),
        monitorDecider,
        {
          type: 'ChangeMonitor',
          monitorId,
          keyId: key.keyId,
          maxKeywords: limitsOf(key).keywordsPerMonitor,
          addKeywords: body.add_keywords,
          removeKeywords: body.remove_keywords,
          addDomains: body.add_domains,
          removeDomains: body.remove_domains,
          ...settingsOf(body, schedule),
          now: now().toISOString(),
        },
        ctx,
      );
      await settle(res.position);
      return owned(key, monitorId);
    },

    async remove(key: ApiKeyDoc, monitorId: string, ctx: CommandContext = {}) {
      owned(key, monitorId);
      const res = await handle(
        streams.monitor(monitorId),
        monitorDecider,
        { type: 'DeleteMonitor', monitorId, keyId: key.keyId, now: now().toISOString() },
        ctx,
      );
      if (res.events.length > 0) await freeLimit(key, monitorId, 'deleted', ctx);
      await settle(res.position);
    },

    /**
     * Runs every keyword now: one job per keyword, submitted by the write side's scheduler at the key's rate (the
     * first at once). The job ids are known in advance; each exists from its `submit_at`.
     */
    async run(key: ApiKeyDoc, monitorId: string, noCache: boolean, ctx: CommandContext = {}) {
      const doc = owned(key, monitorId);
      const monitor = await deps.versions.current(monitorId);
      if (!monitor) throw new DomainError(errorCodes.monitorNotFound, 'monitor not found');
      const at = now();
      const runId = manualRunId(at.getTime(), randomBytes(6).toString('hex'));
      // one manual run in progress per monitor, decided on the key's limits stream (parallel requests included)
      await handle(
        streams.keyLimits(key.keyId),
        keyLimitsDecider,
        {
          type: 'StartManualRun',
          keyId: key.keyId,
          monitorId,
          runId,
          completed: (id) => {
            const known = queries.monitors.run(id);
            // a run taken and never started (its process died between the two appends) is over after a minute
            return known ? known.status === 'completed' : at.getTime() - runTimeOf(id) > ABANDONED_AFTER_MS;
          },
          now: at.toISOString(),
        },
        ctx,
      );
      const run = runRecord(doc, monitor, {
        runId,
        trigger: 'manual',
        noCache,
        startAt: at.toISOString(),
        intervalMs: pacing(monitor.keywords.length, 0, key.rateLimitPerMin).intervalMs,
        startedAt: at.toISOString(),
      });
      const res = await handle(
        streams.monitorRun(runId),
        monitorRunDecider,
        { type: 'StartRun', run },
        {
          ...ctx,
          newStream: true,
        },
      );
      await settle(res.position);
      return {
        run_id: runId,
        jobs: plannedJobs(run, monitor.keywords).map((j) => ({
          keyword: j.keyword,
          job_id: j.jobId,
          submit_at: new Date(j.submitAt).toISOString(),
        })),
      };
    },
  };
};
export type MonitorService = ReturnType<typeof createMonitorService>;
