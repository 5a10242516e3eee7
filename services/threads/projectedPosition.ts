import type { Projector } from '../projector/projector.js';

/**
 * The projected position another thread reports, as the main thread sees it (the pipeline thread's, a cluster api's
 * projector thread's: docs/architecture.md#threads-and-processes-and-where-each-starts): `waitFor` resolves once a report reaches the position, and rejects
 * when the thread ended first (its supervisor then waits on the next thread, supervisor.ts).
 */
export const createProjectedPosition = (projectedAt: number) => {
  let projected = projectedAt;
  let ended: Error | undefined;
  const waiters: Array<{ position: number; resolve: () => void; reject: (err: Error) => void }> = [];
  const projector: Projector = {
    start: async () => undefined,
    waitFor: (target) =>
      target <= projected
        ? Promise.resolve()
        : ended
          ? Promise.reject(ended)
          : new Promise<void>((resolve, reject) => waiters.push({ position: target, resolve, reject })),
    stop: async () => undefined,
  };
  return {
    projector,
    /** the thread reports the read models include `position` */
    reached(position: number) {
      projected = Math.max(projected, position);
      // one pass, kept in place: a splice each would be quadratic when many reads wait on one commit
      let kept = 0;
      for (const w of waiters) {
        if (w.position <= projected) w.resolve();
        else waiters[kept++] = w;
      }
      waiters.length = kept;
    },
    /** the thread ended: every wait fails with `err` */
    end(err: Error) {
      ended = err;
      for (const w of waiters.splice(0)) w.reject(err);
    },
  };
};
