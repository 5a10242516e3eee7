import type { JobStatusDoc } from '../../../../projections/jobStatus/jobStatus.js';
import type { SearchResultDoc } from '../../../../projections/searchResults/searchResults.js';
import type { LinkSettings } from '../../../answers/html.js';
import type { Geotarget } from '../../../geo/geotargets.js';
import type { BlobStore } from '../../../ports/blobStore.js';
import type { RateLimiter } from '../../../ports/rateLimiter.js';
import type { PageViews } from '../../../render/pageViews.js';
import type { SearchService } from '../../../searches/commands/searches.js';
import type { Authenticator, AuthFailureGate } from '../../auth.js';
import type { StoredAnswers } from '../../render/stored.js';

/** What the SerpApi-compatible surface needs; compose builds it (the same services as /v1). */
export interface CompatOptions {
  searches: SearchService;
  authenticate: Authenticator;
  authFailures: AuthFailureGate;
  limiter: RateLimiter;
  links: LinkSettings;
  blobStore: BlobStore;
  resultOf(job: JobStatusDoc): SearchResultDoc | undefined;
  /** finished answers kept as bytes (the /v1 routes' too): a stored search fetched again is sent as it was made */
  stored?: StoredAnswers;
  /** the origin absolute links are built on (SERP_PUBLIC_BASE_URL, else the listening address) */
  baseUrl(): string;
  syncTimeoutMs: number;
  retentionDays: number;
  resolveLocation?: (name: string) => unknown;
  suggestLocations?: (name: string, limit: number) => string[];
  locations?: { search(query: string, limit: number): Geotarget[]; byId(id: number): Geotarget | undefined };
  /** screenshots of stored pages (docs/screenshots.md): the archive's `{id}.png` and `{id}.webp` */
  pages: PageViews;
}
