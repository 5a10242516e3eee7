import t from 'tap';
import { signRawLink, verifyRawLink } from '../../services/answers/signing.js';

/**
 * Signed links to a job's raw HTML (docs/api.md, `output=html`): anyone holding the link may read the page until it
 * expires, and a link for another job, a changed expiry or a forged signature is refused.
 */
const secret = 'a signing secret of the server';
const now = Date.parse('2026-12-07T10:00:00.000Z');

t.test('raw-HTML links › a link works until it expires', async (t) => {
  const { url, expiresAt } = signRawLink(secret, 'https://serp.example', 'job1', 3600, now);
  t.equal(expiresAt, '2026-12-07T11:00:00.000Z', 'valid for the time asked');
  const u = new URL(url);
  t.equal(`${u.origin}${u.pathname}`, 'https://serp.example/raw/job1', 'on the public origin');
  const expires = Number(u.searchParams.get('expires'));
  const signature = u.searchParams.get('signature') ?? '';
  t.equal(verifyRawLink(secret, 'job1', expires, signature, now + 3_599_000), 'ok', 'a second before: ok');
  t.equal(verifyRawLink(secret, 'job1', expires, signature, now + 3_601_000), 'expired', 'a second after: expired');
});

t.test('raw-HTML links › what is refused', async (t) => {
  const u = new URL(signRawLink(secret, 'http://127.0.0.1:8080', 'job1', 60, now).url);
  const expires = Number(u.searchParams.get('expires'));
  const signature = u.searchParams.get('signature') ?? '';
  t.equal(verifyRawLink(secret, 'job2', expires, signature, now), 'invalid', 'another job');
  t.equal(verifyRawLink(secret, 'job1', expires + 86_400, signature, now), 'invalid', 'a later expiry written in');
  t.equal(verifyRawLink('another secret of a server', 'job1', expires, signature, now), 'invalid', 'another server');
  t.equal(verifyRawLink(secret, 'job1', expires, signature.slice(1), now), 'invalid', 'a signature cut short');
  t.equal(verifyRawLink(secret, 'job1', Number.NaN, signature, now), 'expired', 'an expiry that is no number');
});
