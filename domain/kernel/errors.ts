/** A command refused by the rules of the domain. `code` is stable (`SERP_<AREA>_<WHAT>`) and maps to an HTTP status. */
export class DomainError extends Error {
  constructor(
    readonly code: string,
    message: string,
    /** for a refusal that passes with time (a limit per hour): when to ask again, in seconds (Retry-After) */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export const errorCodes = {
  quotaExceeded: 'SERP_QUOTA_EXCEEDED',
  keyNotFound: 'SERP_KEY_NOT_FOUND',
  keyExists: 'SERP_KEY_EXISTS',
  keyRevoked: 'SERP_KEY_REVOKED',
  jobNotFound: 'SERP_JOB_NOT_FOUND',
  jobExists: 'SERP_JOB_EXISTS',
  jobNotTerminal: 'SERP_JOB_NOT_TERMINAL',
  eventInvalid: 'SERP_EVENT_INVALID',
  monitorNotFound: 'SERP_MONITOR_NOT_FOUND',
  monitorInvalid: 'SERP_MONITOR_INVALID',
  monitorLimit: 'SERP_MONITOR_LIMIT',
  runNotFound: 'SERP_MONITOR_RUN_NOT_FOUND',
  webhookNotFound: 'SERP_WEBHOOK_NOT_FOUND',
  webhookInvalid: 'SERP_WEBHOOK_INVALID',
  webhookLimit: 'SERP_WEBHOOK_LIMIT',
  deliveryNotFound: 'SERP_WEBHOOK_DELIVERY_NOT_FOUND',
  runInProgress: 'SERP_MONITOR_RUN_IN_PROGRESS',
  replayLimit: 'SERP_WEBHOOK_REPLAY_LIMIT',
} as const;
