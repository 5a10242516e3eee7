import { fork } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

/**
 * A webhook receiver in a process of its own (receiverChild.ts): the same receiver as `startReceiver`, verifying every
 * delivery with `standardwebhooks`, for benchmarks that time the service while thousands of deliveries arrive. Its
 * deliveries stay in its process; the bench asks for counts.
 */
export const startReceiverProcess = async () => {
  const child = fork(fileURLToPath(new URL('./receiverChild.ts', import.meta.url)), [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const [ready] = (await once(child, 'message')) as [{ ready: string }];
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  child.on('message', (m: { id?: number; value?: unknown; error?: string }) => {
    if (m.id === undefined) return;
    const w = waiting.get(m.id);
    waiting.delete(m.id);
    if (m.error) w?.reject(new Error(m.error));
    else w?.resolve(m.value);
  });
  child.on('exit', () => {
    for (const w of waiting.values()) w.reject(new Error('the receiver process exited'));
    waiting.clear();
  });
  let next = 0;
  const ask = <T>(m: Record<string, unknown>) =>
    new Promise<T>((resolve, reject) => {
      const id = ++next;
      waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
      child.send({ id, ...m });
    });
  return {
    origin: ready.ready,
    setSecrets: (path: string, list: string[]) => ask<void>({ cmd: 'setSecrets', path, list }),
    down: () => ask<void>({ cmd: 'down' }),
    up: () => ask<void>({ cmd: 'up' }),
    /** deliveries on paths starting with `prefix` */
    count: (prefix: string) => ask<number>({ cmd: 'count', prefix }),
    /** distinct (path, webhook-id) deliveries on paths starting with `prefix` */
    distinct: (prefix: string) => ask<number>({ cmd: 'distinct', prefix }),
    async close() {
      if (child.exitCode !== null) return;
      await ask<void>({ cmd: 'close' }).catch(() => undefined);
      if (child.exitCode === null) await once(child, 'exit');
    },
  };
};
export type ReceiverProcess = Awaited<ReturnType<typeof startReceiverProcess>>;
