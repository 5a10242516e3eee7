import type { SerpRankHistoryInput, SerpRankHistoryOutput } from '../../contracts/mcp.js';
import type { V1Client } from '../client/v1Client.js';

/** serp_rank_history's answer: per monitor, keyword and domain, the points as [time, position | status]. */
export const rankHistory = async (client: V1Client, args: SerpRankHistoryInput): Promise<SerpRankHistoryOutput> => {
  const ids = args.monitor_id
    ? [args.monitor_id]
    : (await client.monitors())
        .filter(
          (m) =>
            (m.keywords as string[]).includes(args.keyword ?? '') &&
            (m.domains as string[]).includes(args.domain ?? ''),
        )
        .map((m) => String(m.monitor_id));
  const series: SerpRankHistoryOutput['series'] = [];
  for (const id of ids) {
    const q = new URLSearchParams();
    for (const k of ['keyword', 'domain', 'from', 'to'] as const)
      if (args[k] !== undefined) q.set(k, args[k] as string);
    const body = await client.history(id, q);
    const bySeries = new Map<string, SerpRankHistoryOutput['series'][number]>();
    for (const p of body.points) {
      const k = `${p.keyword}\u0000${p.domain}`;
      const s = bySeries.get(k) ?? { monitor_id: id, keyword: p.keyword, domain: p.domain, best: null, points: [] };
      bySeries.set(k, s);
      const v =
        p.status === 'ranked' && p.position !== null ? p.position : p.status === 'ranked' ? 'not_ranked' : p.status;
      s.points.push([p.checked_at, v]);
      if (typeof v === 'number' && (s.best === null || v < s.best)) s.best = v;
    }
    series.push(...bySeries.values());
  }
  return { series };
};

export const rankHistoryText = (out: SerpRankHistoryOutput) =>
  out.series.length === 0
    ? 'No rank history: no monitor of this key tracks that keyword and domain, or it has not run yet.'
    : out.series
        .map(
          (s) =>
            `${s.keyword} — ${s.domain} (monitor ${s.monitor_id}, best ${s.best ?? 'never ranked'}): ${s.points
              .map(([at, v]) => `${at.slice(0, 16).replace('T', ' ')} ${v}`)
              .join('; ')}`,
        )
        .join('\n');
