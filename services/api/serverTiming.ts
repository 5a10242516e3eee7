/**
 * A read's `Server-Timing` header (W3C Server Timing): where its time inside the handler went, so a client or the
 * soak can tell a slow answer's cause (waiting for the pipeline thread, rendering, compressing) from time spent
 * before the handler ran (docs/api.md#server-timing). Cheap: a few clock reads per request.
 */
export const createServerTiming = () => {
  const started = performance.now();
  const parts: string[] = [];
  return {
    /** runs `work`, recording its duration as `name` */
    async time<T>(name: string, work: () => Promise<T> | T): Promise<T> {
      const t0 = performance.now();
      try {
        return await work();
      } finally {
        parts.push(`${name};dur=${(performance.now() - t0).toFixed(1)}`);
      }
    },
    /** records what happened, without a duration (`answer;desc=stored`) */
    note(name: string, desc: string) {
      parts.push(`${name};desc=${desc}`);
    },
    /** the header's value: every part so far, then the handler's whole time as `total` */
    header(): string {
      return [...parts, `total;dur=${(performance.now() - started).toFixed(1)}`].join(', ');
    },
  };
};
export type ServerTiming = ReturnType<typeof createServerTiming>;
