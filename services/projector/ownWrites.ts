import type { CommandHandler } from '../ports/commandHandler.js';

/**
 * Read-your-writes scoped to a key, for a process whose appends are projected on another thread (embedded mode's
 * pipeline thread, docs/architecture.md#embedded-mode-serp-api-serve-the-default): the position of this process's
 * last append for each key (a command that names its `keyId`: a submit's reservation, a release, the key's own
 * changes), so that a usage read waits until its own key's writes are projected, not every key's. That thread runs at
 * nice 10 behind crawl work, and every submit of every key moved the one position all usage reads waited for.
 */
export const createOwnWrites = (
  /** resolves once the read models hold `position` */
  projected: (position: number) => Promise<void>,
  /** past this a read answers from what is projected (a lagging projector does not hold requests longer) */
  maxWaitMs = 2_000,
) => {
  const lastByKey = new Map<string, number>();
  const note = (keyId: string, position: number) => {
    if (position > (lastByKey.get(keyId) ?? 0)) lastByKey.set(keyId, position);
  };
  return {
    /** `handle`, noting the position of each append whose command names a key */
    tracking(handle: CommandHandler): CommandHandler {
      return (async (stream, decider, command, ctx) => {
        const res = await handle(stream, decider, command, ctx);
        const keyId = (command as { keyId?: unknown } | undefined)?.keyId;
        if (typeof keyId === 'string' && res.position !== undefined) note(keyId, res.position);
        return res;
      }) as CommandHandler;
    },
    /** resolves once this process's appends for `keyId` so far are projected (bounded by `maxWaitMs`) */
    async settled(keyId: string): Promise<void> {
      const target = lastByKey.get(keyId);
      if (target === undefined) return;
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), maxWaitMs);
      });
      try {
        const caughtUp = await Promise.race([projected(target).then(() => true), late]);
        // projected: forgotten, unless a later append of the key came meanwhile (the map stays as small as the keys
        // with appends not yet projected)
        if (caughtUp && lastByKey.get(keyId) === target) lastByKey.delete(keyId);
      } finally {
        clearTimeout(timer);
      }
    },
  };
};
export type OwnWrites = ReturnType<typeof createOwnWrites>;
