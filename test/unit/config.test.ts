import t from 'tap';
import { loadConfig } from '../../services/config/config.js';

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
