import { pagesFor } from '../../contracts/search.js';
import { nextSlot, type RecordedSchedule } from '../../domain/monitor/schedule.js';
import { hourOf } from '../../projections/dashboard/hourlyOutcomes.js';
import type { ReadModelQueries } from '../../projections/index.js';
import { type FleetCapacity, fleetCapacity, type RunningFleet } from './capacity.js';

const HOUR = 3_600_000;
/** slots of one monitor looked at over the horizon, at most (a cron firing every minute has 1,440 a day) */
const MAX_SLOTS = 2000;

/** A monitor as demand sees it: when it runs and what a run asks of the fleet. */
export interface MonitorLoad {
  monitorId: string;
  schedule: RecordedSchedule;
  /** Google pages one run asks for at most: keywords × pages of its depth */
  pagesPerRun: number;
  /** the first slot not started yet (absent: none) */
  nextSlot?: string;
}

/** the monitors that run, as the read models hold them */
export const monitorLoads = (queries: ReadModelQueries): MonitorLoad[] =>
  queries.monitors.scheduled().flatMap((s) => {
    if (s.paused) return [];
    const m = queries.monitors.byId(s.monitorId);
    if (!m) return [];
    return [
      {
        monitorId: s.monitorId,
        schedule: s.schedule,
        pagesPerRun: m.keywords.length * pagesFor(m.depth),
        ...(s.nextSlot ? { nextSlot: s.nextSlot } : {}),
      },
    ];
  });

/**
 * How long a run's searches are spread over (docs/fleet.md#capacity-against-demand): over its slot, at most
 * `spreadMaxMs`, as always; and when the fleet's capacity left for monitors cannot crawl the run that fast, over as
 * long as that capacity needs, up to the next slot. A run never bunches more pages than the fleet can take.
 */
export const spreadWindowMs = (
  slotMs: number,
  spreadMaxMs: number,
  pagesPerRun: number,
  /** pages a minute the fleet can give the monitors' runs (null: not known, spread as always) */
  pagesPerMinute: number | null,
) => {
  const usual = Math.min(slotMs, spreadMaxMs);
  if (pagesPerMinute === null || pagesPerMinute <= 0) return usual;
  const needed = (pagesPerRun / pagesPerMinute) * 60_000;
  return Math.min(slotMs, Math.max(usual, needed));
};

/**
 * The monitors' planned pages per UTC hour from `from` for `hours` hours: each slot's run spread over its window
 * (spreadWindowMs), its pages shared by the hours that window covers.
 */
export const plannedPages = (
  loads: MonitorLoad[],
  from: Date,
  hours: number,
  spreadMaxMs: number,
  pagesPerMinute: number | null,
): Map<string, number> => {
  const start = from.getTime();
  const end = start + hours * HOUR;
  const out = new Map<string, number>();
  const add = (a: number, b: number, pages: number) => {
    if (b <= a) {
      const h = hourOf(new Date(a).toISOString());
      out.set(h, (out.get(h) ?? 0) + pages);
      return;
    }
    for (let t = a; t < b; ) {
      const hourEnd = Math.min(b, Math.floor(t / HOUR) * HOUR + HOUR);
      const h = hourOf(new Date(t).toISOString());
      out.set(h, (out.get(h) ?? 0) + (pages * (hourEnd - t)) / (b - a));
      t = hourEnd;
    }
  };
  for (const m of loads) {
    let slot = m.nextSlot ? Math.max(Date.parse(m.nextSlot), start) : undefined;
    for (let i = 0; slot !== undefined && slot < end && i < MAX_SLOTS; i++) {
      const following = nextSlot(m.schedule, new Date(slot))?.getTime();
      const slotMs = (following ?? slot + spreadMaxMs) - slot;
      const window = spreadWindowMs(slotMs, spreadMaxMs, m.pagesPerRun, pagesPerMinute);
      add(
        slot,
        Math.min(end, slot + window),
        (m.pagesPerRun * (Math.min(end, slot + window) - slot)) / Math.max(1, window),
      );
      slot = following;
    }
  }
  return out;
};

/** The busiest hour of the last day in pages the live lane asked for: what monitors must leave room for. */
export const livePeakPerHour = (queries: ReadModelQueries, now: Date) =>
  Math.max(0, ...queries.queue.laneHours(24, now).map((h) => h.pages.live ?? 0));

export interface DemandHour {
  hour: string;
  /** pages asked per lane: what was submitted (past hours) or what the monitors plan (coming hours, `scheduled`) */
  live: number;
  scheduled: number;
  bulk: number;
  planned: boolean;
}

/**
 * Demand against capacity per hour (the dashboard's chart): the last `past` hours as submitted per lane, then the
 * next `ahead` hours of the monitors' planned runs, with the fleet's capacity now.
 */
export const demandAgainstCapacity = (
  queries: ReadModelQueries,
  now: Date,
  spreadMaxMs: number,
  /** the routes the running fleet has (capacity.ts): routes of a run before a restart leave the capacity */
  fleet?: RunningFleet,
  past = 24,
  ahead = 24,
): { hours: DemandHour[]; capacity: FleetCapacity; livePeak: number } => {
  const capacity = fleetCapacity(queries, now, fleet);
  const history = queries.queue.laneHours(past, now).map((h) => ({
    hour: h.hour,
    live: h.pages.live ?? 0,
    scheduled: h.pages.scheduled ?? 0,
    bulk: h.pages.bulk ?? 0,
    planned: false,
  }));
  const livePeak = livePeakPerHour(queries, now);
  const nextHour = new Date(Math.floor(now.getTime() / HOUR) * HOUR + HOUR);
  const planned = plannedPages(
    monitorLoads(queries),
    nextHour,
    ahead,
    spreadMaxMs,
    monitorsShare(capacity.pagesPerMinute, livePeak),
  );
  const coming = Array.from({ length: ahead }, (_, i) => {
    const hour = hourOf(new Date(nextHour.getTime() + i * HOUR).toISOString());
    return { hour, live: 0, scheduled: Math.round(planned.get(hour) ?? 0), bulk: 0, planned: true };
  });
  return { hours: [...history, ...coming], capacity, livePeak };
};

/** pages a minute the monitors' runs can have: the fleet's capacity less the live lane's busiest hour (null: unknown) */
export const monitorsShare = (pagesPerMinute: number | null, livePeakPerHourPages: number) =>
  pagesPerMinute === null ? null : Math.max(0, pagesPerMinute - livePeakPerHourPages / 60);

/**
 * What a monitor created or changed would leave short (docs/fleet.md#capacity-against-demand): with its runs among the
 * other monitors' over the next day, and room for the live lane's busiest recent hour, the hour that asks the most
 * against the fleet's capacity now; a warning naming the shortfall and the routes that would close it, or none. No
 * warning while the capacity is not known (no crawl has reported yet).
 */
export const capacityWarnings = (
  queries: ReadModelQueries,
  monitor: MonitorLoad,
  now: Date,
  spreadMaxMs: number,
): string[] => {
  const capacity = fleetCapacity(queries, now);
  if (capacity.pagesPerMinute === null) return [];
  const perHour = capacity.pagesPerMinute * 60;
  const livePeak = livePeakPerHour(queries, now);
  const loads = [...monitorLoads(queries).filter((m) => m.monitorId !== monitor.monitorId), monitor];
  // planned as if the fleet were big enough: the demand the schedules ask for, before spreading stretches it
  const planned = plannedPages(loads, now, 24, spreadMaxMs, null);
  let worst = { hour: '', pages: 0 };
  for (const [hour, pages] of planned) if (pages > worst.pages) worst = { hour, pages };
  const needed = worst.pages + livePeak;
  if (needed <= perHour) return [];
  const short = Math.ceil(needed - perHour);
  const routes = capacity.perRoute ? Math.ceil(short / 60 / capacity.perRoute) : null;
  const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
  return [
    `the fleet can crawl about ${fmt(perHour)} pages an hour (${capacity.routes} route${capacity.routes === 1 ? '' : 's'}, ${capacity.basis === 'paced' ? 'their paces now' : 'the busiest minute of the last hour'}); the monitors' runs need up to ${fmt(worst.pages)} pages in the hour from ${worst.hour.slice(11)}:00 UTC (this monitor's runs ${fmt(monitor.pagesPerRun)} pages each) and live searches took up to ${fmt(livePeak)} in an hour of the last day: about ${fmt(short)} pages an hour short${routes !== null ? `, which about ${routes} more route${routes === 1 ? '' : 's'} at ${fmt(capacity.perRoute ?? 0)} requests a minute would close` : ''}. Its runs are spread over longer than usual, up to the next slot.`,
  ];
};
