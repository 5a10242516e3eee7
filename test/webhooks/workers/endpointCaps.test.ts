import t from 'tap';
import { createEndpointCaps } from '../../../services/webhooks/workers/endpointCaps.js';

/**
 * Each endpoint's cap on attempts in flight (docs/webhooks.md#fair-share): a receiver that hangs is soon held to one
 * attempt at a time, so it cannot fill the pool's slots; one that answers climbs back, up to half the pool.
 */
const answered = { statusCode: 200, latencyMs: 5 };
const hung = { error: 'no answer within 10000 ms', latencyMs: 10_000 };

t.test('webhook endpoint caps › a hanging receiver is throttled, a healthy one climbs back', async (t) => {
  const caps = createEndpointCaps(32);
  t.equal(caps.cap('slow'), 4, 'an endpoint starts at an eighth of the pool');
  for (let i = 0; i < 4; i++) caps.started('slow');
  t.notOk(caps.free('slow'), 'four in flight: no room for a fifth');
  t.equal(caps.room('slow'), 0, 'room 0');
  t.ok(caps.free('other'), 'another endpoint is not held back by it');

  caps.ended('slow', hung);
  t.equal(caps.cap('slow'), 2, 'a timeout halves the cap');
  caps.ended('slow', hung);
  caps.ended('slow', hung);
  t.equal(caps.cap('slow'), 1, 'down to one at a time, never zero');
  t.equal(caps.room('slow'), 0, 'with one still in flight, nothing more may start');
  caps.ended('slow', { statusCode: 500, latencyMs: 3 });
  t.equal(caps.cap('slow'), 2, 'any answer, even a 500, grows it by one');

  for (let i = 0; i < 40; i++) {
    caps.started('slow');
    caps.ended('slow', answered);
  }
  t.equal(caps.cap('slow'), 16, 'answers climb back up to half the pool, no further');
  caps.ended('slow', { error: 'connection refused', latencyMs: 1 });
  t.equal(caps.cap('slow'), 16, 'a refused connection is no timeout and no answer: the cap stays');
});

t.test('webhook endpoint caps › small pools', async (t) => {
  const caps = createEndpointCaps(4);
  t.equal(caps.cap('a'), 1, 'a pool of 4 starts each endpoint at one');
  caps.started('a');
  caps.ended('a', answered);
  caps.started('a');
  caps.ended('a', answered);
  t.equal(caps.cap('a'), 2, 'and lets it grow to two');
});
