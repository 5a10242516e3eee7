import type { EventOf, MonitorDefinition } from '../../contracts/events.js';
import { MONITOR_SETTINGS, type MonitorSetting } from '../../domain/monitor/monitor.js';
import { nextSlot, type RecordedSchedule, slotAt } from '../../domain/monitor/schedule.js';
import type { Projection } from '../projection.js';

/**
 * A monitor as its key reads it (docs/rank-tracking.md): its definition as created (`MonitorDefinition`, so a field
 * added there is kept here with nothing more to write), as changed since, and how far its runs got. Gone once deleted.
 */
export type MonitorDoc = Omit<MonitorDefinition, 'backfill'> & {
  paused: boolean;
  createdAt: string;
  updatedAt: string;
  lastRunAt?: string;
  backfill: 'none' | 'pending' | 'done';
};
type Kept<Missing extends never> = Missing;
/** every setting a change records is a field of the document (a new one fails to compile here until it is) */
export type EverySettingKept = Kept<Exclude<MonitorSetting, keyof MonitorDoc>>;

/**
 * When a monitor's next scheduled run is due (the scheduler's read model): small, one per live monitor, all found by
 * the lookup `active`. `nextSlot` is the first slot not started yet: at creation the slot in progress (a new monitor
 * is searched at once), then the firing after the last slot started. Paused monitors keep their document with no
 * lookup; a backfill still pending holds the first run back.
 */
export interface MonitorScheduleDoc {
  monitorId: string;
  keyId: string;
  schedule: RecordedSchedule;
  paused: boolean;
  nextSlot?: string;
  lastSlot?: string;
  backfill: 'none' | 'pending' | 'done';
}

const runEvent = (e: { type: string }) => e.type === 'MonitorRunStarted' || e.type === 'MonitorRunCompleted';

const monitorIdOf = (e: { type: string; data: unknown }) =>
  e.type.startsWith('Monitor') ? (e.data as { monitorId: string }).monitorId : undefined;

const firstSlot = (schedule: RecordedSchedule, at: string) => slotAt(schedule, new Date(at))?.toISOString();
const after = (schedule: RecordedSchedule, slot: string) => nextSlot(schedule, new Date(slot))?.toISOString();

export const monitorsProjection: Projection<MonitorDoc> = {
  name: 'monitors',
  lookupOf: (doc) => doc.keyId,
  idOf: (e) =>
    e.type === 'MonitorCreated' || e.type === 'MonitorChanged' || e.type === 'MonitorDeleted' || runEvent(e)
      ? monitorIdOf(e)
      : undefined,
  evolve(doc, e) {
    switch (e.type) {
      case 'MonitorCreated': {
        const { backfill, createdAt, ...d } = e.data;
        return { ...d, paused: false, createdAt, updatedAt: createdAt, backfill: backfill ? 'pending' : 'none' };
      }
      case 'MonitorChanged': {
        if (!doc) return null;
        const c = e.data;
        const drop = (list: string[], gone?: string[]) => (gone ? list.filter((x) => !gone.includes(x)) : list);
        const next: Record<string, unknown> = {
          ...doc,
          keywords: [...drop(doc.keywords, c.keywordsRemoved), ...(c.keywordsAdded ?? [])],
          domains: [...drop(doc.domains, c.domainsRemoved), ...(c.domainsAdded ?? [])],
        };
        // every setting the event carries, in its declared order: a value replaces, null clears (the default again)
        for (const k of MONITOR_SETTINGS) {
          const v = c[k];
          if (v === null) delete next[k];
          else if (v !== undefined) next[k] = v;
        }
        return { ...next, updatedAt: c.changedAt } as MonitorDoc;
      }
      case 'MonitorDeleted':
        return null;
      case 'MonitorRunStarted':
        if (!doc || e.data.trigger === 'backfill') return doc ?? null;
        return { ...doc, lastRunAt: e.data.startedAt };
      case 'MonitorRunCompleted':
        if (!doc || e.data.trigger !== 'backfill') return doc ?? null;
        return { ...doc, backfill: 'done' };
      default:
        return doc ?? null;
    }
  },
};

export const monitorScheduleProjection: Projection<MonitorScheduleDoc> = {
  name: 'monitorSchedule',
  lookupOf: (doc) => (doc.paused ? undefined : 'active'),
  idOf: monitorsProjection.idOf,
  evolve(doc, e) {
    switch (e.type) {
      case 'MonitorCreated': {
        const { monitorId, keyId, schedule, backfill, createdAt } = e.data;
        return {
          monitorId,
          keyId,
          schedule,
          paused: false,
          nextSlot: firstSlot(schedule, createdAt),
          backfill: backfill ? 'pending' : 'none',
        };
      }
      case 'MonitorChanged': {
        if (!doc) return null;
        const schedule = e.data.schedule ?? doc.schedule;
        const paused = e.data.paused ?? doc.paused;
        // a new schedule, or a monitor unpaused, starts from the slot in progress then (skipped slots stay skipped)
        const restart = e.data.schedule !== undefined || (doc.paused && !paused);
        const nextSlot = restart
          ? (() => {
              const current = firstSlot(schedule, e.data.changedAt);
              return current && doc.lastSlot && current <= doc.lastSlot ? after(schedule, doc.lastSlot) : current;
            })()
          : doc.nextSlot;
        return { ...doc, schedule, paused, nextSlot };
      }
      case 'MonitorDeleted':
        return null;
      case 'MonitorRunStarted': {
        if (!doc || e.data.trigger !== 'schedule' || !e.data.slot) return doc ?? null;
        if (doc.lastSlot && doc.lastSlot >= e.data.slot) return doc;
        return { ...doc, lastSlot: e.data.slot, nextSlot: after(doc.schedule, e.data.slot) };
      }
      case 'MonitorRunCompleted':
        if (!doc || e.data.trigger !== 'backfill') return doc ?? null;
        return { ...doc, backfill: 'done' };
      default:
        return doc ?? null;
    }
  },
};

/** A run as the scheduler and the api read it: its plan, and how far it got. Open runs are found by lookup `open`. */
export interface MonitorRunDoc {
  run: EventOf<'MonitorRunStarted'>['data'];
  status: 'open' | 'completed';
  checked: number;
  failed: number;
  skipped: number;
  skipReason?: string;
  completedAt?: string;
}

export const monitorRunsProjection: Projection<MonitorRunDoc> = {
  name: 'monitorRuns',
  lookupOf: (doc) => (doc.status === 'open' ? 'open' : `monitor:${doc.run.monitorId}`),
  idOf: (e) =>
    e.type === 'MonitorRunStarted' ||
    e.type === 'MonitorKeywordChecked' ||
    e.type === 'MonitorKeywordsSkipped' ||
    e.type === 'MonitorRunCompleted'
      ? e.data.runId
      : undefined,
  evolve(doc, e) {
    switch (e.type) {
      case 'MonitorRunStarted':
        return { run: e.data, status: 'open', checked: 0, failed: 0, skipped: 0 };
      case 'MonitorKeywordChecked':
        if (!doc) return null;
        return e.data.ok ? { ...doc, checked: doc.checked + 1 } : { ...doc, failed: doc.failed + 1 };
      case 'MonitorKeywordsSkipped':
        if (!doc) return null;
        return {
          ...doc,
          skipped: doc.skipped + (e.data.count ?? e.data.keywords?.length ?? 0),
          skipReason: doc.skipReason ?? e.data.reason,
        };
      case 'MonitorRunCompleted':
        if (!doc) return null;
        return { ...doc, status: 'completed', completedAt: e.data.completedAt };
      default:
        return doc ?? null;
    }
  },
};
