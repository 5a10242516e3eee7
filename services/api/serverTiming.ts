/**
 * A read's `Server-Timing` header (W3C Server Timing): where its time inside the handler went, so a client or the
 * soak can tell a slow answer's cause (waiting for the pipeline thread, rendering, compressing) from time spent
 * before the handler ran (docs/api.md#server-timing). Cheap: a few clock reads per request.
 */
export const createServerTiming = (
  options: {
    /** ms since the server took the request (Fastify's `reply.elapsedTime`): its hooks (the key's check, the limits) too */
    sinceRequest?: () => number;
    /** parts timed before the handler ran (ms by name: the key check's `key` and `limit`) */
    before?: Record<string, number | undefined>;
  } = {},
) => {
  const { sinceRequest } = options;
  const started = performance.now();
  const parts: string[] = Object.entries(options.before ?? {}).flatMap(([name, ms]) =>
    ms === undefined ? [] : [`${name};dur=${ms.toFixed(1)}`],
  );
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
    /**
     * the header's value: every part so far, the handler's whole time as `total`, and, last, the time since the
     * server took the request as `request`
     */
    header(): string {
      const since = sinceRequest?.();
      return [
        ...parts,
        `total;dur=${(performance.now() - started).toFixed(1)}`,
        ...(since === undefined ? [] : [`request;dur=${since.toFixed(1)}`]),
      ].join(', ');
    },
  };
};
export type ServerTiming = ReturnType<typeof createServerTiming>;
