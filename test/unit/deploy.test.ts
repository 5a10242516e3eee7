import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { parseAllDocuments } from 'yaml';
import { durableOf } from '../../services/adapters/jobQueue/jetstream.js';
import { ROLES } from '../../services/config/distributed.js';
import { VARIABLES } from '../../services/config/schema.js';
import { QUEUE_CLASSES } from '../../services/ports/jobQueue.js';
import { ALLOCATOR_ENV } from '../../services/runtime/allocator.js';

/**
 * deploy/ is not run in CI (no container engine, no Kubernetes): this checks every file parses and agrees with the
 * code — the environment names are ones the code reads, every role has what its config schema requires, the ports
 * and probes are the service's, one image runs every role, and the NATS settings are the ones we require.
 */
const root = join(import.meta.dirname, '..', '..');
const deploy = join(root, 'deploy');
const known = new Set<string>(VARIABLES);
const required = ['SERP_EVENTSTORE_URL', 'SERP_NATS_URL', 'SERP_KEY_PEPPER', 'SERP_ADMIN_TOKEN', 'SERP_LINK_SECRET'];

const docsOf = (file: string) =>
  parseAllDocuments(readFileSync(file, 'utf8'), { merge: true }).map((d) => {
    if (d.errors.length) throw new Error(`${file}: ${d.errors.map((e) => e.message).join('; ')}`);
    return d.toJS({ maxAliasCount: 100 }) as Record<string, unknown>;
  });

t.test('deploy › compose: every role, the same image, known env names, the api port and /health', async (t) => {
  const [compose] = docsOf(join(deploy, 'compose.yaml'));
  const services = compose.services as Record<string, Record<string, unknown>>;
  t.ok(services.kurrentdb, 'a KurrentDB service');
  t.same(
    ['nats-1', 'nats-2', 'nats-3'].filter((n) => services[n]),
    ['nats-1', 'nats-2', 'nats-3'],
    'three NATS nodes',
  );
  for (const role of ROLES) {
    const s = services[role];
    t.ok(s, `a ${role} service`);
    if (!s) continue;
    t.equal(s.image, 'serp-api:latest', `${role}: the one image`);
    t.same(s.command, ['--role', role], `${role}: runs its role`);
    const env = s.environment as Record<string, string>;
    for (const name of Object.keys(env)) t.ok(known.has(name), `${role}: ${name} is read by the code`);
    for (const name of required) t.ok(env[name], `${role}: sets ${name}`);
    t.match(env.SERP_EVENTSTORE_URL, /^kurrentdb:\/\//, `${role}: events in KurrentDB`);
    t.equal(env.SERP_PORT, '8080');
    t.match(
      JSON.stringify((s.healthcheck as { test: string[] }).test),
      /127\.0\.0\.1:8080\/health/,
      `${role}: probes /health`,
    );
  }
  t.match((services.api.ports as string[])[0], /:8080$/, 'the api port is published');
});

t.test('deploy › nats config: JetStream with sync_interval always, a three-node cluster', async (t) => {
  const conf = readFileSync(join(deploy, 'nats', 'nats-server.conf'), 'utf8');
  t.match(conf, /sync_interval:\s*always/);
  t.match(conf, /max_payload:\s*8MB/, 'room for a CrawlCompleted with a 10-page result');
  t.equal([...conf.matchAll(/nats-route:\/\//g)].length, 3);
  const streams = JSON.parse(readFileSync(join(deploy, 'nats', 'streams.json'), 'utf8'));
  const names = streams.streams.map((s: { name: string }) => s.name);
  t.same(names, ['SERP_EVENTS', 'SERP_JOBS'], 'the stream names the adapters use by default');
  const jetstreamEs = readFileSync(join(root, 'services', 'adapters', 'eventStore', 'jetstream.ts'), 'utf8');
  const jetstreamQ = readFileSync(join(root, 'services', 'adapters', 'jobQueue', 'jetstream.ts'), 'utf8');
  t.match(jetstreamEs, /'SERP_EVENTS'/);
  t.match(jetstreamEs, /'serp\.events'/);
  t.match(jetstreamQ, /'SERP_JOBS'/);
  t.match(jetstreamQ, /'serp\.jobs'/);
  t.match(jetstreamQ, /'crawlers'/);
  const jobs = streams.streams[1] as {
    subjects: string[];
    consumers: { durable_name: string; filter_subject: string }[];
  };
  t.same(jobs.subjects, ['serp.jobs', 'serp.jobs.>'], 'the old subject and one per queue class');
  t.same(
    jobs.consumers.map((c) => [c.durable_name, c.filter_subject]),
    QUEUE_CLASSES.map((c) => [durableOf('crawlers', c), `serp.jobs.${c}`]),
    'one consumer per queue class, named as the adapter names them',
  );
});

t.test(
  'deploy › kubernetes: a Deployment per role with probes on /health, PDBs, crawler autoscaling on lag',
  async (t) => {
    const files = readdirSync(join(deploy, 'k8s')).filter((f) => f.endsWith('.yaml'));
    const docs = files.flatMap((f) => docsOf(join(deploy, 'k8s', f)));
    const config = docs.find((d) => d.kind === 'ConfigMap' && (d.metadata as { name: string }).name === 'serp-api');
    const secret = docs.find((d) => d.kind === 'Secret');
    const envNames = [
      ...Object.keys((config?.data as Record<string, string>) ?? {}),
      ...Object.keys((secret?.stringData as Record<string, string>) ?? {}),
    ];
    for (const name of envNames) t.ok(known.has(name), `${name} is read by the code`);
    for (const name of required) t.ok(envNames.includes(name), `the shared config sets ${name}`);
    for (const role of ROLES) {
      const d = docs.find((x) => x.kind === 'Deployment' && (x.metadata as { name: string }).name === `serp-${role}`);
      t.ok(d, `a Deployment for ${role}`);
      if (!d) continue;
      const c = (d as { spec: { template: { spec: { containers: Record<string, unknown>[] } } } }).spec.template.spec
        .containers[0];
      t.equal(c.image, 'serp-api:latest');
      t.same(c.args, ['--role', role]);
      t.equal(
        (c.ports as { containerPort: number }[])[0].containerPort,
        Number(config?.data && (config.data as Record<string, string>).SERP_PORT),
      );
      for (const probe of ['readinessProbe', 'livenessProbe']) {
        t.same((c[probe] as { httpGet: unknown }).httpGet, { path: '/health', port: 8080 }, `${role}: ${probe}`);
      }
    }
    const pdbs = docs.filter((d) => d.kind === 'PodDisruptionBudget').map((d) => (d.metadata as { name: string }).name);
    t.ok(
      pdbs.includes('serp-api') && pdbs.includes('serp-crawler') && pdbs.includes('nats'),
      `PDBs: ${pdbs.join(', ')}`,
    );
    const scaled = docs.find((d) => d.kind === 'ScaledObject') as
      | { spec: { scaleTargetRef: { name: string }; triggers: { type: string; metadata: Record<string, string> }[] } }
      | undefined;
    t.equal(scaled?.spec.scaleTargetRef.name, 'serp-crawler');
    t.same(
      scaled?.spec.triggers.map((x) => [x.type, x.metadata.stream, x.metadata.consumer]),
      QUEUE_CLASSES.map((c) => ['nats-jetstream', 'SERP_JOBS', durableOf('crawlers', c)]),
      "KEDA scales on every queue class's consumer",
    );
    const nats = docs.find((d) => d.kind === 'StatefulSet') as { spec: { replicas: number } } | undefined;
    t.equal(nats?.spec.replicas, 3, 'three NATS nodes');
  },
);

t.test('deploy › Dockerfile: Node 20, the bin as entrypoint, the port the config expects', async (t) => {
  const file = readFileSync(join(deploy, 'Dockerfile'), 'utf8');
  t.match(file, /FROM node:20/);
  t.match(file, /ENTRYPOINT \["node", "bin\/serp-api\.js", "serve"\]/);
  t.match(file, /EXPOSE 8080/);
  t.match(file, /SERP_PORT=8080/);
});

t.test('deploy › Dockerfile: every role runs with the C allocator settings the soak holds its RSS with', async (t) => {
  const file = readFileSync(join(deploy, 'Dockerfile'), 'utf8');
  // the ENV lines' NAME=value pairs (the image's environment, which every role's container inherits)
  const set = new Map(
    [...file.matchAll(/^ENV (.+)$/gm)].flatMap((m) =>
      m[1]!.split(/\s+/).map((pair) => pair.split('=') as [string, string]),
    ),
  );
  for (const [name, value] of Object.entries(ALLOCATOR_ENV)) {
    t.equal(
      set.get(name),
      value,
      `${name}=${value}: without it RSS climbs with glibc's arenas (docs/operations.md#memory)`,
    );
  }
});

t.test(
  'deploy › npm start: the service a reader of the README starts runs with the same C allocator settings',
  async (t) => {
    const { scripts } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    // the environment the start script sets for `serp-api serve`: the NAME=value words before it
    const serve = scripts.start!.split('&&').find((part) => part.includes('serve')) ?? '';
    const set = new Map(
      serve
        .trim()
        .split(/\s+/)
        .filter((word) => /^[A-Z_]+=/.test(word))
        .map((pair) => pair.split('=') as [string, string]),
    );
    for (const [name, value] of Object.entries(ALLOCATOR_ENV)) {
      t.equal(set.get(name), value, `${name}=${value} in npm start (docs/operations.md#memory)`);
    }
  },
);
