import { parentPort, workerData } from 'node:worker_threads';
import { createSqliteWriter } from '../adapters/eventStore/sqliteWriter.js';
import { injectedFault } from './threadFaults.js';
import {
  type FromWriterThread,
  type ToWriterThread,
  toWire,
  unpackGroup,
  type WriterThreadSetup,
} from './writerThread.js';

/**
 * The embedded event store's writer thread (writerThread.ts): it holds the events file's write connection and runs
 * each group commit (the inserts and the fsync) off the thread that answers HTTP.
 */
const { path, busyTimeoutMs } = workerData as WriterThreadSetup;
const port = parentPort;
if (!port) throw new Error('writerWorker runs as a worker thread');
const writer = createSqliteWriter(path, busyTimeoutMs);

port.on('message', (message: ToWriterThread) => {
  // a real fault (SERP_CHAOS_FAULTS): an error nothing catches ends this thread with the group unwritten
  if ('fault' in message) throw injectedFault('writer');
  let reply: FromWriterThread;
  if ('close' in message) {
    writer.close();
    reply = { id: message.id, closed: true };
  } else {
    try {
      reply = {
        id: message.id,
        outcomes: writer
          .write('packed' in message ? unpackGroup(message.packed) : message.batch)
          .map((o) => (o.ok ? o : { ok: false as const, error: toWire(o.error) })),
      };
    } catch (error) {
      reply = { id: message.id, failed: toWire(error) };
    }
  }
  port.postMessage(reply);
  if ('closed' in reply) port.close();
});
