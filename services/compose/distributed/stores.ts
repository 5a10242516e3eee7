import { connect, type NatsConnection } from '@nats-io/transport-node';
import { createNatsObjectBlobStore } from '../../adapters/blobStore/natsObject.js';
import { createJetStreamEventStore } from '../../adapters/eventStore/jetstream.js';
import { createKurrentDbEventStore } from '../../adapters/eventStore/kurrentdb.js';
import { createSqliteReadModelStore } from '../../adapters/readModel/sqlite.js';
import type { Config } from '../../config/config.js';
import type { DistributedConfig } from '../../config/distributed.js';
import type { BlobStore } from '../../ports/blobStore.js';
import type { EventStore } from '../../ports/eventStore.js';
import { createReadModelProjector, PROJECTOR_CHECKPOINT, type Projector } from '../../projector/projector.js';
import { dataPaths } from '../embedded/core.js';

/**
 * JetStream setup on a cluster still electing its leaders (or a busy machine) may time out: try again a few times.
 * A request to a stream or consumer another process has just created is answered by its leader, and one sent before
 * that leader is elected gets no answer at all, however long it waits; the next one is answered at once. So the
 * setup's requests wait 2.5 s on the first attempt, doubling to 15 s (`setupTimeoutMs`), rather than 15 s each time
 * (docs/distributed.md#a-cluster-on-one-machine).
 */
export const atStart = async <T>(what: string, fn: (setupTimeoutMs: number) => Promise<T>): Promise<T> => {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn(Math.min(15_000, 2_500 * 2 ** (attempt - 1)));
    } catch (err) {
      const transient = /timeout|no responders|not ready|leader|unavailable|10008/i.test(
        String((err as Error).message),
      );
      if (!transient || attempt >= 6) throw err;
      console.error(`serp-api: ${what}: ${(err as Error).message}; trying again (${attempt}/6)`);
      await new Promise((r) => setTimeout(r, 500 * attempt));
    }
  }
};

/** a connection to the NATS servers of a distributed process (`name` tells the servers which process it is) */
export const connectNats = (dist: DistributedConfig, name: string): Promise<NatsConnection> =>
  connect({ servers: dist.natsServers, name, maxReconnectAttempts: -1 });

/**
 * The shared event store of a distributed process (docs/distributed.md): JetStream, over `nc` when it is on the same
 * servers (else a connection of its own, which it closes), or KurrentDB.
 */
export const openEventStore = (dist: DistributedConfig, nc: NatsConnection, name: string): Promise<EventStore> => {
  const es = dist.eventStore;
  if (es.kind !== 'jetstream')
    return Promise.resolve(createKurrentDbEventStore({ connectionString: es.connectionString }));
  const sameNats = es.servers.join(',') === dist.natsServers.join(',');
  return atStart('event store', async (setupTimeoutMs) =>
    createJetStreamEventStore({
      setupTimeoutMs,
      nc: sameNats ? nc : await connect({ servers: es.servers, name, maxReconnectAttempts: -1 }),
      ownsConnection: !sameNats,
      replicas: dist.natsReplicas,
    }),
  );
};

/** raw HTML and results in NATS's object store (the read models' projector reads results from it too) */
export const openBlobStore = (dist: DistributedConfig, nc: NatsConnection): Promise<BlobStore> =>
  atStart('blob store', (setupTimeoutMs) =>
    createNatsObjectBlobStore({ nc, replicas: dist.natsReplicas, setupTimeoutMs }),
  );

/**
 * A cluster api's projector as its thread composes it (runtime/projectorWorker.ts, docs/distributed.md#roles): a NATS
 * connection, an event store and a blob store of the thread's own (reads only: it never appends) and a connection to
 * the SQLite read models of `dataDir`, the file the HTTP thread reads. `close` stops the projector, then its stores.
 */
export const composeProjectorThread = async (
  config: Config,
  dist: DistributedConfig,
  onProjected: (position: number) => void,
): Promise<{ projector: Projector; checkpoint: () => number; close: () => Promise<void> }> => {
  const closers: Array<() => Promise<void> | void> = [];
  const close = async () => {
    for (const fn of closers.reverse()) {
      try {
        await fn();
      } catch {
        // closing what is left: the thread ends anyway
      }
    }
  };
  try {
    const name = `serp-api ${dist.roles.join(',')} ${process.pid} projector`;
    const nc = await connectNats(dist, name);
    closers.push(async () => {
      if (!nc.isClosed()) await nc.drain();
    });
    const eventStore = await openEventStore(dist, nc, name);
    closers.push(() => eventStore.close());
    const blobStore = await openBlobStore(dist, nc);
    const readModels = createSqliteReadModelStore(dataPaths(config.dataDir).readModels);
    closers.push(() => readModels.close());
    const projector = createReadModelProjector({ eventStore, readModels, blobStore, onProjected });
    closers.push(() => projector.stop());
    return { projector, checkpoint: () => readModels.checkpoint(PROJECTOR_CHECKPOINT), close };
  } catch (err) {
    await close();
    throw err;
  }
};
