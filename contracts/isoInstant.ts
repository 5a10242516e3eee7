import { z } from 'zod';

/**
 * A date or instant a client sends (a replay's `since`, a history's `from` and `to`, …): `2026-03-01`, or
 * `2026-03-01T12:00`, `…T12:00:00`, `…T12:00:00.250Z`, `…T12:00:00+02:00`. Every part is checked against the calendar
 * and the clock, because `Date.parse` rolls an impossible date over (`2026-02-30` is March 2) and zod's own ISO checks
 * neither accept the forms clients already send (minutes without seconds and a zone) nor say which part is wrong
 * (docs/api.md#dates-and-times). The value stays the string sent.
 */
const SHAPE =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?([Zz]|([+-])(\d{2}):(\d{2}))?)?$/;

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

/** the days of `month` (1–12) in `year`, by the proleptic Gregorian calendar `Date.UTC` uses */
const daysIn = (year: number, month: number) => new Date(Date.UTC(year, month, 0)).getUTCDate();

/** what is wrong with `value` as a date or instant, or undefined when nothing is */
export const instantProblem = (value: string): string | undefined => {
  const m = SHAPE.exec(value);
  if (!m)
    return `must be an ISO date or instant, e.g. 2026-03-01 or 2026-03-01T12:00:00Z (got "${value.slice(0, 40)}")`;
  const [year, month, day, hour, minute, second, , , offH, offM] = m
    .slice(1)
    .map((p) => (p === undefined ? undefined : Number(p)));
  const date = `${m[1]}-${m[2]}-${m[3]}`;
  if (month! < 1 || month! > 12) return `${date} is not a date: there is no month ${m[2]} (01–12)`;
  const days = daysIn(year!, month!);
  if (day! < 1 || day! > days) {
    return `${date} is not a date: ${MONTHS[month! - 1]} ${m[1]} has ${days} days`;
  }
  if (hour !== undefined && hour > 23) return `${m[4]}:${m[5]} is not a time of day: hours are 00–23`;
  if (minute !== undefined && minute > 59) return `${m[4]}:${m[5]} is not a time of day: minutes are 00–59`;
  if (second !== undefined && second > 59) return `second ${m[6]} is not a time of day: seconds are 00–59`;
  if (offH !== undefined && (offH > 23 || offM! > 59)) {
    return `${m[7]} is not a UTC offset: hours are 00–23 and minutes 00–59`;
  }
  return undefined;
};

export const IsoInstant = z
  .string()
  .trim()
  .max(40, 'must be an ISO date or instant of at most 40 characters, e.g. 2026-03-01T12:00:00Z')
  .superRefine((value, ctx) => {
    const problem = instantProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });
export type IsoInstant = z.infer<typeof IsoInstant>;
