import { z } from 'zod';

/** The roles a distributed process can play (DESIGN.md §2); several at once as a comma list. */
export const ROLES = ['api', 'crawler', 'dispatcher', 'projector'] as const;
export type Role = (typeof ROLES)[number];

/** What distributed mode reads from the environment, beyond the common Config. One schema, checked at start. */
export interface DistributedConfig {
  roles: Role[];
  /** SERP_EVENTSTORE_URL: nats://host:4222[,nats://…] (JetStream) or kurrentdb://… / esdb://… */
  eventStore: { kind: 'jetstream'; servers: string[] } | { kind: 'kurrentdb'; connectionString: string };
  /** SERP_NATS_URL: queue, rate limits and raw HTML (comma-separated servers) */
  natsServers: string[];
  /** SERP_NATS_REPLICAS: replicas of each stream, KV and object bucket this process creates (1 or 3; default 1) */
  replicas: number;
  /** SERP_QUEUE_ACK_WAIT_MS: a crawl silent this long is handed to another crawler (default 60,000) */
  ackWaitMs: number;
  /** SERP_QUEUE_MAX_DELIVER: attempts per job (default 5) */
  maxDeliver: number;
  /** SERP_QUEUE_DEDUPE_WINDOW_MS: one job id + dispatch enqueued once within this window (default 1 h) */
  dedupeWindowMs: number;
}

const urlList = (v: string) =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

const natsUrl = z
  .string()
  .min(1)
  .refine((v) => urlList(v).every((u) => /^(nats|tls):\/\/[^\s/]+(:\d+)?\/?$/.test(u)), {
    message: 'must be nats://host:port, or several separated by commas',
  });

const Env = z.object({
  SERP_EVENTSTORE_URL: z
    .string({ error: 'is required in distributed mode (nats://… for JetStream or kurrentdb://… for KurrentDB)' })
    .min(1, 'is required in distributed mode (nats://… for JetStream or kurrentdb://… for KurrentDB)')
    .refine((v) => /^(nats|tls|kurrentdb|kdb|esdb|eventstoredb)(\+discover)?:\/\//.test(v), {
      message: 'must start with nats:// (JetStream) or kurrentdb:// / esdb:// (KurrentDB, EventStoreDB)',
    }),
  SERP_NATS_URL: natsUrl.optional(),
  SERP_NATS_REPLICAS: z
    .enum(['1', '3'], { error: 'must be 1 or 3' })
    .optional()
    .transform((v) => Number(v ?? 1)),
  SERP_QUEUE_ACK_WAIT_MS: z.coerce
    .number({ error: 'must be a number of milliseconds' })
    .int()
    .min(1_000, 'must be at least 1000')
    .optional()
    .transform((v) => v ?? 60_000),
  SERP_QUEUE_MAX_DELIVER: z.coerce
    .number({ error: 'must be a whole number' })
    .int()
    .min(1, 'must be at least 1')
    .max(20, 'must be at most 20')
    .optional()
    .transform((v) => v ?? 5),
  SERP_QUEUE_DEDUPE_WINDOW_MS: z.coerce
    .number({ error: 'must be a number of milliseconds' })
    .int()
    .min(1_000, 'must be at least 1000')
    .optional()
    .transform((v) => v ?? 3_600_000),
  // the api processes of a fleet must agree on these: they cannot be made up per process
  SERP_KEY_PEPPER: z.string().min(16, 'must be at least 16 characters').optional(),
  SERP_ADMIN_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  SERP_LINK_SECRET: z.string().min(16, 'must be at least 16 characters').optional(),
});

export class ConfigError extends Error {
  readonly code = 'SERP_CONFIG';
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
    this.name = 'ConfigError';
  }
}

export const parseRoles = (value: string): Role[] => {
  const roles = urlList(value);
  const unknown = roles.filter((r) => !(ROLES as readonly string[]).includes(r));
  if (roles.length === 0 || unknown.length > 0) {
    throw new ConfigError([
      `--role: unknown role ${unknown.map((r) => `"${r}"`).join(', ') || '(none)'}; use ${ROLES.join(', ')} or a comma list`,
    ]);
  }
  return [...new Set(roles)] as Role[];
};

/** Reads and checks distributed mode's settings; every problem is reported, one line each. */
export const loadDistributedConfig = (env: NodeJS.ProcessEnv, roles: Role[]): DistributedConfig => {
  const blank = (v: string | undefined) => (v === '' ? undefined : v);
  const parsed = Env.safeParse(Object.fromEntries(Object.entries(env).map(([k, v]) => [k, blank(v)])));
  const problems: string[] = [];
  if (!parsed.success) {
    for (const issue of parsed.error.issues) problems.push(`${String(issue.path[0])} ${issue.message}`);
  }
  const e = parsed.success ? parsed.data : undefined;
  const isNatsStore = e ? /^(nats|tls):\/\//.test(e.SERP_EVENTSTORE_URL) : false;
  if (e && isNatsStore) {
    const check = natsUrl.safeParse(e.SERP_EVENTSTORE_URL);
    if (!check.success) problems.push('SERP_EVENTSTORE_URL must be nats://host:port, or several separated by commas');
  }
  if (e && !isNatsStore && !e.SERP_NATS_URL) {
    problems.push('SERP_NATS_URL is required with a KurrentDB event store (the job queue, rate limits and raw HTML)');
  }
  if (roles.includes('dispatcher') && !roles.includes('api') && !env.SERP_KEY_PEPPER) {
    problems.push('SERP_KEY_PEPPER is required for the dispatcher role (webhook signing secrets derive from it)');
  }
  if (roles.includes('api')) {
    for (const name of ['SERP_KEY_PEPPER', 'SERP_ADMIN_TOKEN', 'SERP_LINK_SECRET'] as const) {
      if (!env[name]) problems.push(`${name} is required for the api role (every api process must share it)`);
    }
  }
  if (problems.length > 0 || !e) throw new ConfigError(problems);
  const natsServers = urlList(e.SERP_NATS_URL ?? e.SERP_EVENTSTORE_URL);
  return {
    roles,
    eventStore: isNatsStore
      ? { kind: 'jetstream', servers: urlList(e.SERP_EVENTSTORE_URL) }
      : { kind: 'kurrentdb', connectionString: e.SERP_EVENTSTORE_URL },
    natsServers,
    replicas: e.SERP_NATS_REPLICAS,
    ackWaitMs: e.SERP_QUEUE_ACK_WAIT_MS,
    maxDeliver: e.SERP_QUEUE_MAX_DELIVER,
    dedupeWindowMs: e.SERP_QUEUE_DEDUPE_WINDOW_MS,
  };
};

/** Every environment variable distributed mode reads (deploy/ is checked against this list). */
export const DISTRIBUTED_ENV = [...Object.keys(Env.shape)] as const;
