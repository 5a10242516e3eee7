import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { processEnv } from './env.js';
import { defaultTiers, parseEnvironment, SERVE_VARIABLES, type Settings, settingsOf } from './schema.js';

export { ConfigError, defaultTiers, MIN_SECRET_LENGTH, type TierLimits } from './schema.js';

type ServeSettings = Settings<typeof SERVE_VARIABLES>;

/** the values `derive` fills in when their variable is unset: they depend on other variables or on the machine */
type Derived = 'parseThreads' | 'heapGrowingPercent' | 'routeMaxInFlight' | 'instanceId';

/** this process's name when SERP_INSTANCE_ID gives none: made once, so every loadConfig of a process agrees */
const PROCESS_INSTANCE_ID = `ins_${randomBytes(6).toString('hex')}`;

/**
 * What `serp-api serve` runs with (every mode), and what the CLI's commands on a data directory read: the parsed value
 * of every variable of schema.ts's service, crawler and runtime groups, under its field name (`SERP_CACHE_TTL_S` →
 * `cacheTtlS`, in the variable's unit; docs/configuration.md says what each does and its default). A consumer takes the
 * `Pick<Config, …>` it reads, so a value and its default are declared in the schema alone.
 */
export type Config = Omit<ServeSettings, Derived> & { [K in Derived]: NonNullable<ServeSettings[K]> };

/**
 * A tier's share against other keys in a lane (docs/fleet.md#lanes-and-fair-share); a tier the configuration no
 * longer names (a key minted under an older SERP_TIERS) gets the shipped free tier's, as its other limits do.
 */
export const tierShare =
  (tiers: Config['tiers']) =>
  (tier: string): number =>
    (tiers[tier] ?? defaultTiers.free).share;

/** What the command line sets; it wins over the environment. */
export type ConfigOverrides = Partial<Pick<Config, 'port' | 'dataDir' | 'host'>>;

/**
 * The one derivation step: the values that follow from others (the schema documents each as such), and the command
 * line's flags over the environment's values.
 */
const derive = (settings: ServeSettings, overrides: ConfigOverrides): Config => {
  const { pipelineThread } = settings;
  return {
    ...settings,
    port: overrides.port ?? settings.port,
    host: overrides.host ?? settings.host,
    dataDir: resolve(overrides.dataDir ?? settings.dataDir),
    // the pipeline thread takes a core's share itself (test/bench/pipeline.ts at concurrency 32: 382 MB peak RSS with
    // one parse thread on two cores, 428–440 MB with two)
    parseThreads:
      settings.parseThreads ?? (pipelineThread ? Math.max(1, availableParallelism() - 1) : availableParallelism()),
    // with the pipeline thread the event loop's heap holds no results: V8's own factor lets it collect rarely (its
    // full collections were the longest pauses a read waited out), and the threads that do hold results have
    // ceilings of their own, from which V8 derives theirs
    heapGrowingPercent: settings.heapGrowingPercent ?? (pipelineThread ? 0 : 50),
    // as many requests per IP as there are jobs at once: parallel pages fill idle slots, never a bigger burst
    routeMaxInFlight: settings.routeMaxInFlight ?? settings.crawlerConcurrency,
    instanceId: settings.instanceId ?? PROCESS_INSTANCE_ID,
  };
};

/**
 * The service's settings from the environment (schema.ts: every variable, its default and what it does); flags from
 * the CLI win over the environment. Throws a ConfigError naming every wrong variable.
 */
export const loadConfig = (
  env: Readonly<Record<string, string | undefined>> = processEnv(),
  overrides: ConfigOverrides = {},
): Config => derive(settingsOf(SERVE_VARIABLES, parseEnvironment(env)), overrides);
