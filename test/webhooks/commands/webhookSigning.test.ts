import { Webhook } from 'standardwebhooks';
import t from 'tap';
import {
  newSecretSeed,
  secretOf,
  secretsOf,
  signedHeaders,
} from '../../../services/webhooks/commands/webhookSigning.js';

/**
 * Webhook signatures as a receiver checks them with the `standardwebhooks` library (docs/webhooks.md): the secret the
 * API showed the user verifies every attempt, and for 24 h after a rotation the old one still does.
 */
const pepper = 'a pepper of the server, long enough';
const body = JSON.stringify({ type: 'search.completed', data: { job_id: 'j1' } });
// the library refuses timestamps more than five minutes from its clock: sign as of now, as the deliverer does
const at = new Date(Math.floor(Date.now() / 1000) * 1000);
const DAY = 86_400_000;

t.test('webhook signing › a receiver verifies with the endpoint’s secret', async (t) => {
  const seed = newSecretSeed();
  t.match(seed, /^[0-9a-f]{48}$/, 'a seed is 24 random bytes');
  t.not(newSecretSeed(), seed, 'and never the same twice');
  const secret = secretOf(pepper, seed);
  t.match(secret, /^whsec_/, 'a secret in the whsec_ form receivers expect');
  t.equal(secretOf(pepper, seed), secret, 'derived again, the same secret: the log only holds the seed');
  t.not(secretOf('another pepper of the server', seed), secret, 'another server’s pepper: another secret');

  const headers = signedHeaders([secret], 'msg_1', at, body);
  t.equal(headers['webhook-timestamp'], String(at.getTime() / 1000), 'the timestamp in seconds');
  const receiver = new Webhook(secret);
  t.same(receiver.verify(body, headers), JSON.parse(body), 'the payload verifies');
  t.throws(() => receiver.verify(`${body} `, headers), 'a changed body does not');
  t.throws(() => new Webhook(secretOf(pepper, newSecretSeed())).verify(body, headers), 'nor another endpoint’s secret');
});

t.test('webhook signing › a rotation keeps the old secret valid for 24 h', async (t) => {
  const doc = {
    secretSeed: 'new-seed',
    previousSeed: 'old-seed',
    previousValidUntil: new Date(at.getTime() + DAY).toISOString(),
  };
  const during = secretsOf(pepper, doc, at);
  t.same(during, [secretOf(pepper, 'new-seed'), secretOf(pepper, 'old-seed')], 'both secrets during the overlap');
  const headers = signedHeaders(during, 'msg_2', at, body);
  t.equal(headers['webhook-signature'].split(' ').length, 2, 'one signature for each');
  t.same(
    new Webhook(secretOf(pepper, 'old-seed')).verify(body, headers),
    JSON.parse(body),
    'a receiver still on the old secret verifies',
  );
  t.same(new Webhook(secretOf(pepper, 'new-seed')).verify(body, headers), JSON.parse(body), 'and one on the new');
  t.same(
    secretsOf(pepper, doc, new Date(at.getTime() + DAY + 1000)),
    [secretOf(pepper, 'new-seed')],
    'after 24 h only the new one signs',
  );
  t.same(secretsOf(pepper, { secretSeed: 'new-seed' }, at).length, 1, 'never rotated: one secret');
});
