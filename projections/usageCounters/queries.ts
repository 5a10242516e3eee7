import type { DocReader } from '../projection.js';
import { type UsageCounterDoc, usageCounterId, usageCountersProjection } from './usageCounters.js';

export const usageCountersQueries = (docs: DocReader) => {
  const of = (keyId: string, month: string) =>
    docs.get<UsageCounterDoc>(usageCountersProjection.name, usageCounterId(keyId, month));
  return {
    of,
    /** searches counted against the key's quota in `month` (yyyymm): reserved − released */
    used: (keyId: string, month: string) => of(keyId, month)?.used ?? 0,
  };
};
