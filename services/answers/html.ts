import { isWrongPlace } from '../../domain/location/placement.js';
import type { JobStatusDoc } from '../../projections/jobStatus/jobStatus.js';
import { signRawLink } from './signing.js';

export interface LinkSettings {
  linkSecret: string;
  /** SERP_PRESIGN_TTL_S */
  presignTtlS: number;
}

/** `output=html`: an HMAC-signed link to the raw pages (`/raw/{job_id}`), valid for the presign TTL. */
export const htmlLink = (settings: LinkSettings, job: JobStatusDoc, baseUrl: string) => {
  const link = signRawLink(settings.linkSecret, baseUrl, job.jobId, settings.presignTtlS);
  // a search Google placed elsewhere says so beside its link, so no client takes its pages as the place's
  // (docs/locations.md#what-each-surface-answers)
  const misplaced = job.status === 'partial' && isWrongPlace(job.locationCheck);
  return {
    job_id: job.jobId,
    status: job.status,
    html_url: link.url,
    expires_at: link.expiresAt,
    ...(misplaced ? { location_check: job.locationCheck } : {}),
  };
};
