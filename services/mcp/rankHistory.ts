import type { RankFold, SerpRankHistoryInput, SerpRankHistoryOutput } from '../../contracts/mcp.js';
import type { V1Client } from '../client/v1Client.js';

/**
 * serp_rank_history's answer: per monitor, keyword and domain, the points as [time, position | status], with the fold
 * as a third element on a search measured in pixels, and the share of those above it.
 */
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
      // a search measured in pixels carries where the best result lay (docs/rank-tracking.md#pixel-positions)
      s.points.push(
        p.above_the_fold === undefined
          ? [p.checked_at, v]
          : [p.checked_at, v, { pixels_from_top: p.pixels_from_top ?? null, above_the_fold: p.above_the_fold }],
      );
      if (typeof v === 'number' && (s.best === null || v < s.best)) s.best = v;
    }
    for (const s of bySeries.values()) {
      const measured = s.points.flatMap(([, , fold]) => (fold ? [fold] : []));
      if (measured.length)
        s.above_the_fold_share =
          Math.round((measured.filter((f) => f.above_the_fold).length / measured.length) * 10_000) / 10_000;
    }
    series.push(...bySeries.values());
  }
  return { series };
};

const foldText = (f: RankFold) =>
  ` (${f.pixels_from_top === null ? '' : `${f.pixels_from_top} px, `}${f.above_the_fold ? 'above' : 'below'} the fold)`;

const shareText = (s: SerpRankHistoryOutput['series'][number]) =>
  s.above_the_fold_share === undefined
    ? ''
    : `, above the fold in ${Math.round(s.above_the_fold_share * 100)} % of the searches measured in pixels`;

export const rankHistoryText = (out: SerpRankHistoryOutput) =>
  out.series.length === 0
    ? 'No rank history: no monitor of this key tracks that keyword and domain, or it has not run yet.'
    : out.series
        .map(
          (s) =>
            `${s.keyword} — ${s.domain} (monitor ${s.monitor_id}, best ${s.best ?? 'never ranked'}${shareText(s)}): ${s.points
              .map(([at, v, fold]) => `${at.slice(0, 16).replace('T', ' ')} ${v}${fold ? foldText(fold) : ''}`)
              .join('; ')}`,
        )
        .join('\n');
