import { z } from 'zod';

/**
 * The lanes every job runs in (docs/fleet.md#lanes-and-fair-share), highest first: `live` (a submit on /v1, the
 * compat surface or MCP, by default), `scheduled` (monitor runs) and `bulk` (`"priority": "bulk"`, the batch CLI).
 * A higher lane goes first, but every lower lane with work keeps a guaranteed share of page capacity.
 */
export const LANES = ['live', 'scheduled', 'bulk'] as const;
export const Lane = z.enum(LANES);
export type Lane = z.infer<typeof Lane>;

/** What a client may ask for: `scheduled` is the monitors' own lane, never chosen by a submit. */
export const PRIORITIES = ['live', 'bulk'] as const;
export const Priority = z.enum(PRIORITIES, {
  error: 'priority must be "live" (the default) or "bulk" (batches that may wait behind live searches)',
});
export type Priority = z.infer<typeof Priority>;
