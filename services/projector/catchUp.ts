/**
 * The `catchUp` of a process whose read models are fed from a shared event store: reads the store's head and waits
 * until the projector has applied it, for at most `maxWaitMs` (a lagging projector does not hold requests longer).
 * Calls that overlap share the rounds: one round in flight and at most one queued behind it, which starts after
 * every call it serves arrived, so a key acknowledged before its request is always covered, and a flood of unknown
 * keys costs the store one head read per round, not one per request.
 */
export const createCatchUp = (
  head: () => Promise<number>,
  projected: (position: number) => Promise<void>,
  maxWaitMs = 2_000,
): (() => Promise<void>) => {
  const round = async () => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, maxWaitMs);
    });
    try {
      await Promise.race([head().then(projected), late]);
    } catch {
      // the store did not answer: the key is looked up in what this process has
    } finally {
      clearTimeout(timer);
    }
  };
  let running: Promise<void> | undefined;
  let queued: Promise<void> | undefined;
  const start = (): Promise<void> => {
    running = round().finally(() => {
      running = undefined;
    });
    return running;
  };
  return () => {
    if (!running) return start();
    queued ??= running.then(() => {
      queued = undefined;
      return start();
    });
    return queued;
  };
};
