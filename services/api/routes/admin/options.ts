import type { Limits } from '../../../../domain/apiKey/apiKey.js';
import type { ReadModelQueries } from '../../../../projections/index.js';
import type { KeyCommands } from '../../../application/keys.js';
import type { Metrics } from '../../../metrics/metrics.js';
import type { AdminGuard } from '../../auth.js';

export interface AdminOptions {
  guard: AdminGuard;
  adminToken: string;
  queries: ReadModelQueries;
  keys: KeyCommands;
  /** the tiers a key can be minted in */
  tiers: Record<string, Omit<Limits, 'tier'>>;
  /** resolves once the read models include `position` (admin writes answer only then) */
  projected(position: number): Promise<void>;
  /** queue depth and projection lag where this process sees them */
  snapshot?: Metrics['snapshot'];
  now?: () => Date;
}
