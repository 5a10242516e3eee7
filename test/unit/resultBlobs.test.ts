import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import type { ParsedSerp } from '../../contracts/result.js';
import { createFsBlobStore } from '../../services/adapters/blobStore/fs.js';
import { isHandedOver, loadResult, putResult, resultBlobKey } from '../../services/answers/resultBlobs.js';

const result = (title: string): ParsedSerp => ({
  organic_results: [{ position: 1, title, link: 'https://example.com/' }],
  serp_features: {},
  information: {},
});

t.test('a result written here is handed to its first load, once; every other load reads the blob', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'serp-results-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const blobs = createFsBlobStore(dir);
  const written = result('first');
  const ref = await putResult(blobs, resultBlobKey('j1'), written);

  const first = await loadResult(blobs, { resultRef: ref });
  t.same(first, written, 'the first load is the result just written (in the contract’s shape)');
  t.ok(isHandedOver(first), 'marked as handed over: the projector does not validate it again');
  const again = await loadResult(blobs, { resultRef: ref });
  t.not(again, first, 'the second load reads the blob');
  t.notOk(isHandedOver(again), 'a result read from the blob store is validated like any stored data');
  t.same(again, written, 'and finds the same result');

  // a reference with another digest (a blob rewritten since) never takes the handed object
  const ref2 = await putResult(blobs, resultBlobKey('j2'), result('second'));
  t.equal(await loadResult(blobs, { resultRef: { ...ref2, sha256: '0'.repeat(64) } }), undefined, 'digest mismatch');
  t.same(await loadResult(blobs, { resultRef: ref2 }), result('second'), 'the blob itself still reads');

  // bounded: many writes no one loads do not pile up, and the oldest read from the blob
  const refs = [];
  for (let i = 0; i < 40; i++) refs.push(await putResult(blobs, resultBlobKey(`many-${i}`), result(`r${i}`)));
  t.same(await loadResult(blobs, { resultRef: refs[0]! }), result('r0'));
  t.same(await loadResult(blobs, { resultRef: refs[39]! }), result('r39'));
});
