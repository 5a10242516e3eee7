import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import t from 'tap';
import { createFsBlobStore, PARTIAL_MAX_AGE_MS } from '../../services/adapters/blobStore/fs.js';
import { blobStoreConformance } from './blobStoreSuite.js';

t.test('FsBlobStore › conformance', (t) =>
  blobStoreConformance(t, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'serp-blobs-'));
    return { store: createFsBlobStore(dir), cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
  }),
);

t.test(
  'FsBlobStore › a writer grows its blob in .partial and leaves nothing there once committed or aborted',
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'serp-blobs-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const store = createFsBlobStore(dir);
    const partials = () => (existsSync(join(dir, '.partial')) ? readdirSync(join(dir, '.partial')) : []);
    const kept = store.openGzipped('raw/a.html');
    kept.append(gzipSync('<html>a</html>'));
    const dropped = store.openGzipped('raw/b.html');
    dropped.append(gzipSync('<html>b</html>'));
    await new Promise((r) => setTimeout(r, 50));
    t.equal(partials().length, 2, 'two part-written files while the writers are open');
    t.notOk(existsSync(join(dir, 'raw')), 'none under its key yet');
    await kept.commit({ sha256: 'x', bytes: 14 });
    await dropped.abort();
    t.same(partials(), [], 'the committed one moved, the aborted one removed');
    t.same(readdirSync(join(dir, 'raw')), ['a.html']);
  },
);

t.test(
  'FsBlobStore › part-written files older than an hour (a writer killed mid-crawl) go when a store opens',
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'serp-blobs-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    mkdirSync(join(dir, '.partial'));
    writeFileSync(join(dir, '.partial', 'dead'), 'half');
    writeFileSync(join(dir, '.partial', 'live'), 'half');
    const old = (Date.now() - PARTIAL_MAX_AGE_MS - 60_000) / 1000;
    utimesSync(join(dir, '.partial', 'dead'), old, old);
    const store = createFsBlobStore(dir);
    await store.sweptPartials;
    t.same(readdirSync(join(dir, '.partial')), ['live'], 'a recent one may belong to a running service: kept');
  },
);
