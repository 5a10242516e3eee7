import { Cron } from 'croner';

/**
 * Monitor schedules (docs/rank-tracking.md): `hourly` (minute 0), `daily` (00:00 UTC), `weekly` (Monday 00:00 UTC)
 * or a five-field cron in an IANA time zone. A slot is a firing time; a run of a slot is spread over the slot (until
 * the next firing, at most `spreadMaxMs`) and never faster than the key's rate.
 */
export type RecordedSchedule = 'hourly' | 'daily' | 'weekly' | { cron: string; timezone: string };

const PRESETS = { hourly: '0 * * * *', daily: '0 0 * * *', weekly: '0 0 * * 1' } as const;

const cronOf = (s: RecordedSchedule) =>
  typeof s === 'string'
    ? new Cron(PRESETS[s], { timezone: 'UTC', mode: '5-part' })
    : new Cron(s.cron, { timezone: s.timezone, mode: '5-part' });

const HOUR_MS = 3_600_000;

/** Why a schedule is refused (a cron that does not parse, an unknown time zone, firings closer than an hour), or undefined. */
export const scheduleProblem = (s: RecordedSchedule, now = new Date()): string | undefined => {
  if (typeof s === 'string') return undefined;
  if (s.cron.trim().split(/\s+/).length !== 5) {
    return `cron "${s.cron}" must have five fields: minute hour day-of-month month day-of-week (e.g. "0 6 * * 1-5")`;
  }
  try {
    new Intl.DateTimeFormat('en', { timeZone: s.timezone });
  } catch {
    return `unknown timezone "${s.timezone}": give an IANA name such as "Europe/Berlin" or "UTC"`;
  }
  let cron: Cron;
  try {
    cron = cronOf(s);
  } catch (err) {
    return `cron "${s.cron}" does not parse: ${(err as Error).message}`;
  }
  const runs = cron.nextRuns(200, now);
  if (runs.length === 0) return `cron "${s.cron}" never fires`;
  for (let i = 1; i < runs.length; i++) {
    if (runs[i].getTime() - runs[i - 1].getTime() < HOUR_MS) {
      return `cron "${s.cron}" fires more often than hourly (${runs[i - 1].toISOString()} then ${runs[i].toISOString()}): monitors run at most once an hour`;
    }
  }
  return undefined;
};

/** The last firing at or before `at` (the slot in progress), or undefined. */
export const slotAt = (s: RecordedSchedule, at: Date): Date | undefined => {
  const cron = cronOf(s);
  // previousRuns counts a firing within the reference's own second: step a millisecond past `at`
  return cron.previousRuns(1, new Date(at.getTime() + 1))[0] ?? undefined;
};

/** The first firing after `slot`. */
export const nextSlot = (s: RecordedSchedule, slot: Date): Date | undefined => cronOf(s).nextRun(slot) ?? undefined;

/**
 * How a run's searches are laid out: the i-th at `startAt + i × intervalMs`, spread over `windowMs` and never closer
 * than the key's rate allows (60 s ÷ rate per minute).
 */
export const pacing = (keywords: number, windowMs: number, rateLimitPerMin: number) => {
  const rateGap = 60_000 / Math.max(1, rateLimitPerMin);
  const spread = keywords > 1 ? windowMs / keywords : 0;
  return { intervalMs: Math.ceil(Math.max(rateGap, spread)) };
};
