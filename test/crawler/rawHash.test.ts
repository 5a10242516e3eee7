import { createHash, randomBytes } from 'node:crypto';
import t from 'tap';
import { inlineHashing } from '../../services/crawler/rawHash.js';
import { createHashThread } from '../../services/threads/hashThread.js';
import { BACKGROUND_NICE } from '../../services/threads/nice.js';

const pages = () =>
  Array.from({ length: 4 }, (_, i) => ({
    head: `\n<!-- serp-page start=${i * 10} café -->\n`,
    body: Buffer.from(randomBytes(200_000).toString('base64'), 'utf8'),
  }));

t.test('the hash thread gives the digest of the pages in order, the same as hashing them here', async (t) => {
  const hashing = createHashThread();
  t.teardown(() => hashing.close());
  const input = pages();
  const expected = createHash('sha256');
  for (const p of input) expected.update(p.head, 'utf8').update(p.body);
  const want = expected.digest('hex');

  const inline = inlineHashing.start();
  const threaded = hashing.start();
  const other = hashing.start();
  for (const p of input) {
    inline.add(p.head, Buffer.from(p.body));
    const body = Buffer.from(p.body); // a buffer of its own (Buffer.from copies): it moves to the thread
    threaded.add(p.head, body);
    t.equal(body.byteLength, 0, 'the page moved to the thread, not copied: nothing left here');
    other.add('x', Buffer.from('interleaved'));
  }
  t.equal(await threaded.digest(), want, 'threaded');
  t.equal(await inline.digest(), want, 'inline');
  t.equal(
    await other.digest(),
    createHash('sha256').update('xinterleavedxinterleavedxinterleavedxinterleaved').digest('hex'),
    'jobs fed at the same time keep their own hashes',
  );
  const empty = hashing.start();
  t.equal(await empty.digest(), createHash('sha256').digest('hex'), 'a job given nothing: the empty digest');
  const dropped = hashing.start();
  dropped.add('a', Buffer.from('b'));
  dropped.drop();
  t.equal(
    await dropped.digest(),
    createHash('sha256').digest('hex'),
    'a dropped job is forgotten: the thread holds none of its pages',
  );
});

t.test('the process is not kept alive by an idle hash thread, and close() ends it', async (t) => {
  const hashing = createHashThread();
  const h = hashing.start();
  h.add('head', Buffer.from('body'));
  t.equal(await h.digest(), createHash('sha256').update('headbody').digest('hex'));
  await hashing.close();
  const after = hashing.start();
  after.add('again', Buffer.from('!'));
  t.equal(
    await after.digest(),
    createHash('sha256').update('again!').digest('hex'),
    'a job after close starts a new one',
  );
  await hashing.close();
});

t.test('when the thread dies, the jobs it held fail their digest; the next job gets a new thread', async (t) => {
  const hashing = createHashThread();
  t.teardown(() => hashing.close());
  const held = hashing.start();
  held.add('page', Buffer.from('one'));
  const owed = hashing.start();
  owed.add('page', Buffer.from('three'));
  const waitingDigest = t.rejects(owed.digest(), /closed/, 'a digest awaited when the thread went fails, never hangs');
  await hashing.close(); // the thread is gone with these jobs' pages
  await waitingDigest;
  await t.rejects(held.digest(), /lost/, 'never a digest of part of the pages');
  const next = hashing.start();
  next.add('page', Buffer.from('two'));
  t.equal(await next.digest(), createHash('sha256').update('pagetwo').digest('hex'));
});

t.test(
  'the hash thread runs below the event loop (nice 10 on Linux), the event loop stays where it was',
  { skip: process.platform !== 'linux' && 'thread nice values are per thread on Linux only' },
  async (t) => {
    const { readdirSync, readFileSync } = await import('node:fs');
    const nice = (tid: string) =>
      Number(readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ')[16]);
    const before = new Set(readdirSync('/proc/self/task'));
    const mainNice = nice(String(process.pid));
    const hashing = createHashThread();
    t.teardown(() => hashing.close());
    const h = hashing.start();
    h.add('x', Buffer.from('y'));
    await h.digest();
    const niced = readdirSync('/proc/self/task')
      .filter((tid) => !before.has(tid))
      .map(nice)
      .filter((n) => n === BACKGROUND_NICE);
    t.ok(niced.length >= 1, `a new thread at nice ${BACKGROUND_NICE}`);
    t.equal(nice(String(process.pid)), mainNice, 'the event loop’s own thread is untouched');
  },
);
