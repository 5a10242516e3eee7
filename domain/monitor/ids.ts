import { createHash } from 'node:crypto';

const hex12 = (ms: number) => Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0').slice(-12);
const digest = (...parts: string[]) => createHash('sha256').update(parts.join('\u0000')).digest('hex');

/**
 * Ids derived from what they identify, so that two dispatchers deciding the same thing decide the same stream
 * (docs/rank-tracking.md). Job ids keep the service's shape (24 hex, time-ordered: 12 of milliseconds, 12 more).
 */
export const scheduledRunId = (monitorId: string, slot: string) =>
  `run_${hex12(Date.parse(slot))}${digest('slot', monitorId, slot).slice(0, 12)}`;
export const backfillRunId = (monitorId: string, createdAt: string) =>
  `run_${hex12(Date.parse(createdAt))}${digest('backfill', monitorId).slice(0, 12)}`;
export const manualRunId = (at: number, random: string) => `run_${hex12(at)}${random.slice(0, 12)}`;
/** when a run id says it was made (ms): the 12 hex digits after `run_` */
export const runTimeOf = (runId: string) => Number.parseInt(runId.slice(4, 16), 16) || 0;
export const monitorJobId = (runId: string, keyword: string, submitAt: number) =>
  hex12(submitAt) + digest('job', runId, keyword).slice(0, 12);
/** One alert of a run (docs/rank-tracking.md#alerts): the same alert computed twice is the same id. */
export const alertIdOf = (runId: string, ...what: string[]) => `alr_${digest('alert', runId, ...what).slice(0, 24)}`;
