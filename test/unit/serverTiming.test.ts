import t from 'tap';
import { createServerTiming } from '../../services/api/serverTiming.js';

/**
 * A read's Server-Timing header (docs/api.md#server-timing): the checks before the handler first, then each timed or
 * described part in the order it happened, the handler's `total`, and the time since the server took the request last.
 */
t.test('Server-Timing › parts in the order they happened, the handler and the request last', async (t) => {
  const timing = createServerTiming({ sinceRequest: () => 12.345, before: { key: 0.25, limit: 3 } });
  const answer = await timing.time('job', () => 'found');
  t.equal(answer, 'found', "a timed part gives back its work's answer");
  timing.note('answer', 'stored');
  const header = timing.header();
  t.match(
    header,
    /^key;dur=0\.3, limit;dur=3\.0, job;dur=\d+\.\d, answer;desc=stored, total;dur=\d+\.\d, request;dur=12\.3$/,
  );
});

t.test('Server-Timing › a part that fails is still timed, and nothing asked for is not sent', async (t) => {
  const timing = createServerTiming({ before: { key: 0.1, limit: undefined } });
  await t.rejects(
    timing.time('render', async () => {
      throw new Error('no result');
    }),
    /no result/,
  );
  t.match(timing.header(), /^key;dur=0\.1, render;dur=\d+\.\d, total;dur=\d+\.\d$/, 'no limit, no request part');
});
