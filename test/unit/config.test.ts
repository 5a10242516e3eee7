import t from 'tap';
import { loadConfig } from '../../services/compose/config.js';

t.test('SERP_HEAP_GROWING_PERCENT: 50 by default, 0 leaves V8 its own factor, anything else is refused', async (t) => {
  t.equal(loadConfig({}).heapGrowingPercent, 50);
  t.equal(loadConfig({ SERP_HEAP_GROWING_PERCENT: '0' }).heapGrowingPercent, 0);
  t.equal(loadConfig({ SERP_HEAP_GROWING_PERCENT: '80' }).heapGrowingPercent, 80);
  t.throws(
    () => loadConfig({ SERP_HEAP_GROWING_PERCENT: '-5' }),
    /SERP_HEAP_GROWING_PERCENT must be a non-negative integer/,
  );
  t.throws(() => loadConfig({ SERP_HEAP_GROWING_PERCENT: 'lots' }), /SERP_HEAP_GROWING_PERCENT/);
});

t.test(
  'SERP_PIPELINE_THREAD: off by default; on, one parse thread fewer and V8’s own heap growth, unless set',
  async (t) => {
    const cores = (await import('node:os')).availableParallelism();
    t.equal(loadConfig({}).pipelineThread, false);
    const on = loadConfig({ SERP_PIPELINE_THREAD: '1' });
    t.equal(on.pipelineThread, true);
    t.equal(on.parseThreads, Math.max(1, cores - 1), 'the thread takes a core’s share itself');
    t.equal(on.heapGrowingPercent, 0, 'the event loop’s heap holds no results: V8’s own factor');
    const set = loadConfig({ SERP_PIPELINE_THREAD: '1', SERP_PARSE_THREADS: '3', SERP_HEAP_GROWING_PERCENT: '50' });
    t.equal(set.parseThreads, 3, 'a pool size the user sets wins');
    t.equal(set.heapGrowingPercent, 50, 'a growth bound the user sets wins');
    t.equal(loadConfig({ SERP_PIPELINE_THREAD: '0' }).pipelineThread, false);
    t.throws(() => loadConfig({ SERP_PIPELINE_THREAD: 'yes' }), /SERP_PIPELINE_THREAD must be a non-negative integer/);
  },
);
