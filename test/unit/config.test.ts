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
