import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { createFsBlobStore } from '../../services/adapters/blobStore/fs.js';
import { blobStoreConformance } from './blobStoreSuite.js';

t.test('FsBlobStore › conformance', (t) =>
  blobStoreConformance(t, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'serp-blobs-'));
    return { store: createFsBlobStore(dir), cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
  }),
);
