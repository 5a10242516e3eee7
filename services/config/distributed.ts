import { processEnv } from './env.js';
import {
  ConfigError,
  type EnvironmentValues,
  parseEnvironment,
  type Settings,
  settingsOf,
  VARIABLE_GROUPS,
} from './schema.js';

export { ConfigError } from './schema.js';

/** The roles a distributed process can play (docs/architecture.md); several at once as a comma list. */
export const ROLES = ['api', 'crawler', 'dispatcher', 'projector'] as const;
export type Role = (typeof ROLES)[number];

type DistributedSettings = Settings<typeof VARIABLE_GROUPS.distributed>;

/**
 * What distributed mode reads from the environment, beyond the common Config; checked at start. The queue's and the
 * replicas' settings are the schema's values (`natsReplicas`, `queueAckWaitMs`, `queueMaxDeliver`,
 * `queueDedupeWindowMs`); the two addresses become the stores to connect to.
 */
export type DistributedConfig = Omit<DistributedSettings, 'eventstoreUrl' | 'natsUrl'> & {
  roles: Role[];
  /** SERP_EVENTSTORE_URL: nats://host:4222[,nats://…] (JetStream) or kurrentdb://… / esdb://… */
  eventStore: { kind: 'jetstream'; servers: string[] } | { kind: 'kurrentdb'; connectionString: string };
  /** SERP_NATS_URL, else SERP_EVENTSTORE_URL: queue, rate limits and raw HTML (comma-separated servers) */
  natsServers: string[];
};

const urlList = (v: string) =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

const NATS_URL = /^(nats|tls):\/\/[^\s/]+(:\d+)?\/?$/;
const NATS_URLS = 'must be nats://host:port, or several separated by commas';
const EVENTSTORE = /^(nats|tls|kurrentdb|kdb|esdb|eventstoredb)(\+discover)?:\/\//;
const REQUIRED = 'is required in distributed mode (nats://… for JetStream or kurrentdb://… for KurrentDB)';

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

/**
 * Reads and checks distributed mode's settings (schema.ts has each variable; this adds what a role requires); every
 * problem is reported, one line each.
 */
export const loadDistributedConfig = (
  roles: Role[],
  env: Readonly<Record<string, string | undefined>> = processEnv(),
): DistributedConfig => {
  const problems: string[] = [];
  let e: EnvironmentValues | undefined;
  try {
    e = parseEnvironment(env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    problems.push(...err.problems);
  }
  const store = e?.SERP_EVENTSTORE_URL;
  if (e && !store) problems.push(`SERP_EVENTSTORE_URL ${REQUIRED}`);
  else if (store && !EVENTSTORE.test(store)) {
    problems.push(
      'SERP_EVENTSTORE_URL must start with nats:// (JetStream) or kurrentdb:// / esdb:// (KurrentDB, EventStoreDB)',
    );
  }
  const isNatsStore = store ? /^(nats|tls):\/\//.test(store) : false;
  if (store && isNatsStore && !urlList(store).every((u) => NATS_URL.test(u))) {
    problems.push(`SERP_EVENTSTORE_URL ${NATS_URLS}`);
  }
  const nats = e?.SERP_NATS_URL;
  if (nats && !urlList(nats).every((u) => NATS_URL.test(u))) problems.push(`SERP_NATS_URL ${NATS_URLS}`);
  if (e && store && !isNatsStore && !nats) {
    problems.push('SERP_NATS_URL is required with a KurrentDB event store (the job queue, rate limits and raw HTML)');
  }
  // the api processes of a fleet must agree on these: they cannot be made up per process (their length is the
  // schema's, the same in every mode)
  for (const name of ['SERP_KEY_PEPPER', 'SERP_ADMIN_TOKEN', 'SERP_LINK_SECRET'] as const) {
    const value = e?.[name];
    if (e && value === undefined && roles.includes('api')) {
      problems.push(`${name} is required for the api role (every api process must share it)`);
    }
  }
  if (e && e.SERP_KEY_PEPPER === undefined && roles.includes('dispatcher') && !roles.includes('api')) {
    problems.push('SERP_KEY_PEPPER is required for the dispatcher role (webhook signing secrets derive from it)');
  }
  if (problems.length > 0 || !e || !store) throw new ConfigError(problems);
  const { eventstoreUrl: _store, natsUrl: _nats, ...settings } = settingsOf(VARIABLE_GROUPS.distributed, e);
  return {
    ...settings,
    roles,
    eventStore: isNatsStore
      ? { kind: 'jetstream', servers: urlList(store) }
      : { kind: 'kurrentdb', connectionString: store },
    natsServers: urlList(nats ?? store),
  };
};
