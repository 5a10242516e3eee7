import { resolve } from 'node:path';
import t from 'tap';
import { type Config, ConfigError, loadConfig } from '../../services/config/config.js';
import { fieldOf, SERVE_VARIABLES } from '../../services/config/schema.js';

t.test(
  'SERP_HEAP_GROWING_PERCENT: 0 by default (V8’s own factor), 50 without the pipeline thread, anything else is refused',
  async (t) => {
    t.equal(loadConfig({}).heapGrowingPercent, 0);
    t.equal(loadConfig({ SERP_PIPELINE_THREAD: '0' }).heapGrowingPercent, 50);
    t.equal(loadConfig({ SERP_PIPELINE_THREAD: '0', SERP_HEAP_GROWING_PERCENT: '0' }).heapGrowingPercent, 0);
    t.equal(loadConfig({ SERP_HEAP_GROWING_PERCENT: '80' }).heapGrowingPercent, 80);
    t.throws(
      () => loadConfig({ SERP_HEAP_GROWING_PERCENT: '-5' }),
      /SERP_HEAP_GROWING_PERCENT must be a non-negative integer/,
    );
    t.throws(() => loadConfig({ SERP_HEAP_GROWING_PERCENT: 'lots' }), /SERP_HEAP_GROWING_PERCENT/);
  },
);

t.test(
  'SERP_PIPELINE_THREAD: on by default, with one parse thread fewer and V8’s own heap growth, unless set; 0 turns it off',
  async (t) => {
    const cores = (await import('node:os')).availableParallelism();
    const on = loadConfig({});
    t.equal(on.pipelineThread, true);
    t.equal(on.parseThreads, Math.max(1, cores - 1), 'the thread takes a core’s share itself');
    t.equal(on.heapGrowingPercent, 0, 'the event loop’s heap holds no results: V8’s own factor');
    t.same(loadConfig({ SERP_PIPELINE_THREAD: '1' }), on, 'the same as asking for it');
    const set = loadConfig({ SERP_PARSE_THREADS: '3', SERP_HEAP_GROWING_PERCENT: '50' });
    t.equal(set.parseThreads, 3, 'a pool size the user sets wins');
    t.equal(set.heapGrowingPercent, 50, 'a growth bound the user sets wins');
    const off = loadConfig({ SERP_PIPELINE_THREAD: '0' });
    t.equal(off.pipelineThread, false);
    t.equal(off.parseThreads, cores, 'off: a parse thread per core');
    t.throws(() => loadConfig({ SERP_PIPELINE_THREAD: 'yes' }), /SERP_PIPELINE_THREAD must be a non-negative integer/);
  },
);

t.test(
  'the configuration is the schema’s: one field per variable of serve, named after it, with its default',
  async (t) => {
    const config = loadConfig({}, { dataDir: '/tmp/serp-config-test' });
    const derived = new Set([
      'SERP_PARSE_THREADS',
      'SERP_HEAP_GROWING_PERCENT',
      'SERP_ROUTE_MAX_IN_FLIGHT',
      'SERP_DATA_DIR',
      'SERP_INSTANCE_ID',
    ]);
    t.same(Object.keys(config).sort(), Object.keys(SERVE_VARIABLES).map(fieldOf).sort(), 'no field the schema lacks');
    for (const [name, schema] of Object.entries(SERVE_VARIABLES)) {
      if (derived.has(name)) continue;
      t.same(config[fieldOf(name) as keyof Config], schema.parse(undefined), `${name} → ${fieldOf(name)}`);
    }
    t.equal(fieldOf('SERP_ROUTE_COOLDOWN_S'), 'routeCooldownS', 'camelCase, in the variable’s unit');
    t.equal(config.routeCooldownS, 60, 'a route rests 60 s after a block by default (docs/fleet.md)');
    t.equal(config.routeCooldownMaxS, 1800);
  },
);

t.test('derived values: route in-flight follows the crawler’s concurrency unless set; the flags win', async (t) => {
  t.equal(loadConfig({ SERP_CRAWLER_CONCURRENCY: '3' }).routeMaxInFlight, 3);
  t.equal(
    loadConfig({ SERP_CRAWLER_CONCURRENCY: '3', SERP_ROUTE_MAX_IN_FLIGHT: '0' }).routeMaxInFlight,
    3,
    '0: the default',
  );
  t.equal(loadConfig({ SERP_CRAWLER_CONCURRENCY: '3', SERP_ROUTE_MAX_IN_FLIGHT: '5' }).routeMaxInFlight, 5);
  const flagged = loadConfig(
    { SERP_PORT: '9000', SERP_HOST: '0.0.0.0', SERP_DATA_DIR: '/srv/a' },
    { port: 0, host: '127.0.0.2', dataDir: 'b' },
  );
  t.same([flagged.port, flagged.host, flagged.dataDir], [0, '127.0.0.2', resolve('b')]);
  const env = loadConfig({ SERP_PORT: '9000', SERP_DATA_DIR: '/srv/a' });
  t.same([env.port, env.host, env.dataDir], [9000, '127.0.0.1', '/srv/a']);
  t.match(loadConfig({}).instanceId, /^ins_[0-9a-f]{12}$/, 'the process is named when SERP_INSTANCE_ID is unset');
  t.equal(loadConfig({}).instanceId, loadConfig({}).instanceId, 'once: every load of a process agrees');
  t.equal(loadConfig({ SERP_INSTANCE_ID: 'clu_1/api-1' }).instanceId, 'clu_1/api-1');
});

t.test('a wrong value is refused with one line per variable', async (t) => {
  const err = t.throws(() =>
    loadConfig({ SERP_PORT: 'x', SERP_ROUTE_COOLDOWN_S: '-1', SERP_WEBHOOK_ALLOW_HTTP: 'yes' }),
  );
  t.ok(err instanceof ConfigError);
  t.same((err as ConfigError).problems, [
    'SERP_PORT must be a non-negative integer, got "x"',
    'SERP_WEBHOOK_ALLOW_HTTP must be a non-negative integer, got "yes"',
    'SERP_ROUTE_COOLDOWN_S must be a non-negative number of seconds, got "-1"',
  ]);
});
