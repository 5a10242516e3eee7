/** Helpers the rank-tracking tests share: calls on /v1/monitors and an independent reading of a job's positions. */

export interface Point {
  keyword: string;
  domain: string;
  checked_at: string;
  run_id: string;
  job_id: string;
  status: 'ranked' | 'not_ranked' | 'failed';
  position: number | null;
  url: string | null;
  failure: string | null;
  features: string[];
  /** a monitor with pixel positions (docs/rank-tracking.md#pixel-positions) */
  pixels_from_top?: number | null;
  above_the_fold?: boolean;
}

export const monitorApi = (base: string, key: string) => {
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}/v1${path}`, {
      method,
      headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let json: any;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, json, text, headers: res.headers };
  };
  return {
    call,
    history: async (id: string, query = '') =>
      (await call('GET', `/monitors/${id}/history${query}`)).json as {
        monitor_id: string;
        points: Point[];
      },
    /** polls the history until `enough` says so (or the time runs out) */
    async waitForHistory(id: string, enough: (points: Point[]) => boolean, timeoutMs = 240_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const h = await this.history(id);
        if (enough(h.points) || Date.now() > deadline) return h.points;
        await new Promise((r) => setTimeout(r, 300));
      }
    },
  };
};

/** how many distinct searches (jobs) the points are of */
export const checks = (points: Point[]) => new Set(points.map((p) => p.job_id)).size;

/** A domain's best organic position in a result, by host: an implementation of its own, to compare with. */
export const positionIn = (
  organic: Array<{ position: number; link?: string }>,
  domain: string,
  depth = 100,
): { position: number; url: string } | undefined => {
  const wildcard = domain.startsWith('*.');
  const host = wildcard ? domain.slice(2) : domain;
  let best: { position: number; url: string } | undefined;
  for (const o of organic) {
    if (!o.link || o.position > depth) continue;
    const h = new URL(o.link).hostname;
    const ok = h === host || h === `www.${host}` || (wildcard && h.endsWith(`.${host}`));
    if (ok && (!best || o.position < best.position)) best = { position: o.position, url: o.link };
  }
  return best;
};
