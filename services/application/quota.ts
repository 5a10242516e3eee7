import { streams } from '../../contracts/events.js';
import { usageDecider } from '../../domain/usage/usage.js';
import type { CommandContext, CommandHandler } from '../ports/commandHandler.js';

/** A reservation to give back: the key and month it counts against, the job, why, and when. */
export interface QuotaRelease {
  keyId: string;
  month: string;
  jobId: string;
  /** `crawl failed`, `submit failed`, or what `audit usage --repair` found */
  reason: string;
  now: string;
}

/**
 * Gives a job's reserved quota back on its key's usage stream, the one way every release is made (a final crawl
 * failure, a submit whose job never landed, `audit usage --repair`): a job released twice, or never reserved, is
 * released once or not at all (the usage decider decides nothing then), so any caller may retry it.
 */
export const releaseQuota = (handle: CommandHandler, release: QuotaRelease, ctx?: CommandContext) =>
  handle(streams.usage(release.keyId, release.month), usageDecider, { type: 'ReleaseQuota', ...release }, ctx);
