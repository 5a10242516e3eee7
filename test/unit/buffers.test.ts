import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { ownBuffer, releaseBuffers } from '../../services/buffers.js';

t.test('ownBuffer: only a view over the whole of an ArrayBuffer owns it', async (t) => {
  const big = Buffer.allocUnsafeSlow(64 * 1024);
  t.equal(ownBuffer(big), big.buffer);
  t.equal(ownBuffer(big.subarray(1)), undefined, 'a slice shares its buffer');
  t.equal(ownBuffer(Buffer.from('pooled')), undefined, "a small Buffer lives in Node's shared pool");
});

t.test('releaseBuffers gives the memory back at once and leaves shared buffers alone', async (t) => {
  const before = process.memoryUsage().arrayBuffers;
  const pages = Array.from({ length: 20 }, () => Buffer.alloc(2 ** 20, 1));
  t.ok(process.memoryUsage().arrayBuffers - before >= 20 * 2 ** 20, '20 MB held');
  const pooled = Buffer.from('a page head');
  const slice = pages[0]!.subarray(10, 20);
  releaseBuffers(...pages, pooled, pages[1]!);
  t.equal(pages[0]!.length, 0, 'a released view is detached: nobody may read it after');
  t.equal(slice.byteLength, 0, 'and so is any other view of the same memory');
  t.equal(pooled.toString(), 'a page head', 'a view into the shared pool is not touched');
  // the channel closes on the next turn of the loop; no collection is needed
  await sleep(20);
  t.ok(process.memoryUsage().arrayBuffers - before < 2 ** 20, 'the 20 MB are freed without a GC');
});
