import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { createSqliteReadModelStore } from '../../services/adapters/readModel/sqlite.js';
import { rememberJson } from '../../services/knownJson.js';

/**
 * A document found by lookup (an API key by its HMAC, on every request) is kept in memory; what must never go stale is
 * a revocation, whether this process projected it or another process sharing the file did.
 */
t.test('lookups: cached, and never stale after a commit here or by another connection', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'serp-rm-lookup-'));
  const file = join(dir, 'read.db');
  const here = createSqliteReadModelStore(file);
  const there = createSqliteReadModelStore(file); // another process on the same file
  t.teardown(() => {
    here.close();
    there.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const key = (status: string) => ({ view: 'apiKeys', id: 'k1', doc: { keyId: 'k1', status }, lookup: 'hash-1' });

  t.equal(here.findByLookup('apiKeys', 'hash-1'), undefined, 'a miss');
  here.commit([key('active')], 'p', 1);
  const first = here.findByLookup<{ status: string }>('apiKeys', 'hash-1');
  t.same(first, { keyId: 'k1', status: 'active' }, 'a key committed after a miss is found');
  t.equal(here.findByLookup('apiKeys', 'hash-1'), first, 'the second lookup is the kept document');
  t.ok(Object.isFrozen(first), 'shared between requests, so frozen');

  here.commit([{ view: 'jobs', id: 'j1', doc: { jobId: 'j1' } }], 'p', 2);
  t.equal(here.findByLookup('apiKeys', 'hash-1'), first, 'a commit to another view keeps it');

  here.commit([key('revoked')], 'p', 3);
  t.match(here.findByLookup('apiKeys', 'hash-1'), { status: 'revoked' }, 'revoked here: seen at the next lookup');

  there.commit([key('active')], 'p', 4);
  t.match(here.findByLookup('apiKeys', 'hash-1'), { status: 'active' }, 'changed by another connection: seen too');
  there.commit([{ ...key('revoked'), doc: null }], 'p', 5);
  t.equal(here.findByLookup('apiKeys', 'hash-1'), undefined, 'deleted by another connection: gone');

  here.commit([key('active')], 'p', 6);
  t.ok(here.findByLookup('apiKeys', 'hash-1'));
  here.reset(['p']);
  t.equal(here.findByLookup('apiKeys', 'hash-1'), undefined, 'a reset (rebuild) forgets everything');
});

t.test('has: whether a document exists, without reading it', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'serp-rm-has-'));
  const store = createSqliteReadModelStore(join(dir, 'read.db'));
  t.teardown(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  t.equal(store.has('searchResults', 'j1'), false);
  store.commit([{ view: 'searchResults', id: 'j1', doc: { jobId: 'j1' } }], 'p', 1);
  t.equal(store.has('searchResults', 'j1'), true);
  t.equal(store.has('jobStatus', 'j1'), false, 'per view');
  store.commit([{ view: 'searchResults', id: 'j1', doc: null }], 'p', 2);
  t.equal(store.has('searchResults', 'j1'), false, 'deleted (purged)');
});

t.test(
  'a document embedding a value whose JSON is known is stored with that text (a result is not serialised twice)',
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'serp-rm-known-'));
    const store = createSqliteReadModelStore(join(dir, 'read.db'));
    t.teardown(() => {
      store.close();
      rmSync(dir, { recursive: true, force: true });
    });
    const result = { organic_results: [] };
    rememberJson(result, '{"organic_results":[],"kept":"text"}');
    store.commit([{ view: 'searchResults', id: 'j1', doc: { jobId: 'j1', result } }], 'p', 1);
    t.same(JSON.parse(store.dump().find((d) => d.id === 'j1')?.doc ?? 'null'), {
      jobId: 'j1',
      result: { organic_results: [], kept: 'text' },
    });
  },
);

/**
 * A document that embeds a result this process made (known JSON) is handed to the next `get` as the object just
 * written, once, instead of its text being read back and parsed (the first poll of a finished job); never anything
 * the file does not hold.
 */
t.test('just-written result documents: the next get takes the object, once, and never a stale one', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'serp-rm-handover-'));
  const file = join(dir, 'read.db');
  const here = createSqliteReadModelStore(file);
  const there = createSqliteReadModelStore(file);
  t.teardown(() => {
    here.close();
    there.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const withResult = (id: string, n: number) => {
    const result = { organic_results: [{ position: n }] };
    rememberJson(result, JSON.stringify(result));
    return { view: 'searchResults', id, doc: { jobId: id, result } };
  };

  // opening the file from another connection moves data_version: seen here once, as a running service has long seen it
  here.findByLookup('apiKeys', 'none');
  const a = withResult('j1', 1);
  here.commit([a], 'p', 1);
  t.equal(here.get('searchResults', 'j1'), a.doc, 'the first get is the object written');
  const again = here.get('searchResults', 'j1');
  t.not(again, a.doc, 'taken once: the next get reads the file');
  t.same(again, a.doc, 'and reads the same document');

  const plain = { view: 'searchResults', id: 'j2', doc: { jobId: 'j2', result: { organic_results: [] } } };
  here.commit([plain], 'p', 2);
  t.not(here.get('searchResults', 'j2'), plain.doc, 'a document with no known text is read back as always');

  here.commit([withResult('j3', 3)], 'p', 3);
  here.commit([{ view: 'searchResults', id: 'j3', doc: { jobId: 'j3', purged: true } }], 'p', 4);
  t.same(here.get('searchResults', 'j3'), { jobId: 'j3', purged: true }, 'written again here: the newer one');

  here.commit([withResult('j4', 4)], 'p', 5);
  there.commit([{ view: 'searchResults', id: 'j4', doc: { jobId: 'j4', reparsed: true } }], 'p', 6);
  t.same(here.get('searchResults', 'j4'), { jobId: 'j4', reparsed: true }, 'written by another connection: its one');

  here.commit([withResult('j5', 5)], 'p', 7);
  t.throws(() =>
    here.exclusive(() => {
      here.commit([withResult('j5', 55)], 'p', 8);
      throw new Error('rolled back');
    }),
  );
  t.match(
    here.get('searchResults', 'j5'),
    { result: { organic_results: [{ position: 5 }] } },
    'a commit rolled back leaves nothing it remembered: the file holds the first one',
  );

  for (let i = 0; i < 40; i++) here.commit([withResult(`m${i}`, i)], 'p', 9 + i);
  t.same(here.get('searchResults', 'm0'), withResult('m0', 0).doc, 'bounded: old ones are read from the file');
});
