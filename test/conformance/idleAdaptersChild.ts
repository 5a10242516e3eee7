// Spawned by idleAdapters.test.ts: leaves the embedded adapters busy-but-idle (a delayed message, an unsettled
// delivery, a live subscription) and never closes them. The process must still exit on its own.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SearchRequest } from '../../contracts/search.js';
import { createSqliteEventStore } from '../../services/adapters/eventStore/sqlite.js';
import { createInProcessJobQueue } from '../../services/adapters/jobQueue/inProcess.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'serp-idle-'));
process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));

const queue = createInProcessJobQueue({ ackWaitMs: 60_000, maxDeliver: 5, dedupeWindowMs: 60_000 });
const message = (jobId: string) => ({
  jobId,
  dispatch: 0,
  keyId: 'k',
  cacheKey: 'c',
  submittedAt: new Date().toISOString(),
  request: SearchRequest.parse({ keyword: 'idle' }),
});
await queue.enqueue(message('a'.repeat(24)), { delayMs: 60_000 });
await queue.enqueue(message('b'.repeat(24)));
let delivered = false;
queue.consume(
  async () => {
    delivered = true;
  },
  { concurrency: 1 },
);

const store = createSqliteEventStore({ path: path.join(dir, 'events.db'), pollIntervalMs: 60_000 });
await store.appendToStream('idle', [{ type: 'Happened', data: {} }]);
let seen = 0;
store.subscribeToAll(0, (events) => {
  seen += events.length;
});

setTimeout(() => console.log(JSON.stringify({ delivered, seen })), 300);
