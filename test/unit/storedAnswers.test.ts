import { brotliDecompressSync } from 'node:zlib';
import Fastify from 'fastify';
import t from 'tap';
import { answerKey, createStoredAnswers } from '../../services/api/render/stored.js';

/**
 * A finished result is sent as stored bytes (docs/decisions.md#raw-html-and-finished-answers): the same ETag every
 * time, a 304 when the client has it, compressed once for every client that accepts it, and never stale after a
 * re-parse.
 */
t.test('stored answers', async (t) => {
  const stored = createStoredAnswers();
  const json = JSON.stringify({
    organic_results: Array.from({ length: 100 }, (_, i) => ({ position: i + 1, title: `Result ${i}` })),
  });
  const key = answerKey('job1', 'json', { updatedAt: '2026-12-07T10:00:00.000Z' }, false);
  const app = Fastify();
  app.get('/answer', async (req, reply) => stored.send(req, reply, key, stored.get(key) ?? stored.put(key, json)));
  await app.ready();
  t.teardown(() => app.close());

  const first = await app.inject({ url: '/answer' });
  t.equal(first.body, json, 'the answer as rendered');
  t.match(first.headers, { 'cache-control': 'private, no-cache', vary: 'Accept-Encoding' }, 'private, revalidated');
  const again = await app.inject({ url: '/answer' });
  t.equal(again.headers.etag, first.headers.etag, 'the same ETag each time');
  const unchanged = await app.inject({ url: '/answer', headers: { 'if-none-match': `W/${first.headers.etag}` } });
  t.same([unchanged.statusCode, unchanged.body], [304, ''], 'a client that has it gets 304 and no body');

  const br = await app.inject({ url: '/answer', headers: { 'accept-encoding': 'gzip, br' } });
  t.equal(br.headers['content-encoding'], 'br', 'brotli where the client takes it');
  t.equal(brotliDecompressSync(br.rawPayload).toString('utf8'), json, 'and it decodes to the same answer');
  const weighed = stored.size;
  await app.inject({ url: '/answer', headers: { 'accept-encoding': 'gzip' } });
  t.equal(
    stored.size,
    weighed + (stored.get(key)?.gzip?.length ?? Number.NaN),
    'each compressed form made later counts against the bound too',
  );

  t.not(
    answerKey('job1', 'json', { updatedAt: '2026-12-07T11:00:00.000Z' }, false),
    key,
    'a re-parse moves the result’s version, and with it the key: never served stale',
  );
  t.not(answerKey('job1', 'compat', { updatedAt: '2026-12-07T10:00:00.000Z' }, false), key, 'each form its own');
});

t.test('stored answers › bounded by bytes', async (t) => {
  const stored = createStoredAnswers(10_000);
  for (let i = 0; i < 10; i++) stored.put(`job${i}`, 'x'.repeat(3_000));
  t.ok(stored.size <= 10_000, `never more than its bound (${stored.size} bytes)`);
  t.ok(stored.get('job9'), 'the newest kept');
  t.equal(stored.get('job0'), undefined, 'the oldest dropped: a miss renders again');
});
