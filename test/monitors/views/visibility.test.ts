import t from 'tap';
import { allProjections } from '../../../projections/index.js';
import type { RankHistoryQueries } from '../../../projections/rankHistory/queries.js';
import { visibilityOf } from '../../../services/monitors/views/monitorReads.js';
import { rebuildReadModels } from '../../../services/projector/projector.js';
import { buildTestApp } from '../../support/app.js';
import { visibilityFromHistory } from '../../support/rankVisibility.js';

/**
 * GET /v1/monitors/{id}/visibility answers from the day documents what the history itself gives
 * (test/support/rankVisibility.ts), before and after the monitor is edited (a keyword and a domain removed, another
 * CTR curve: the history stays, the removed domain is listed after the monitor's own) and after `projections rebuild`.
 */
const DAY = 86_400_000;
const START = Date.parse('2026-05-04T00:00:00.000Z');

t.test('visibility › the day documents answer what the history gives', async (t) => {
  const { app, core, mintKey } = await buildTestApp(t);
  const key = await mintKey('pro');
  const call = async (method: 'GET' | 'POST' | 'PATCH', url: string, body?: unknown) => {
    const res = await app.inject({
      method,
      url: `/v1${url}`,
      headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      payload: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.statusCode, body: res.body, json: res.json<Record<string, unknown>>() };
  };
  const keywords = ['cold brew', 'espresso', 'latte art', 'moka pot', 'pour over'];
  const domains = ['example.com', 'rival.com', '*.other.org'];
  const created = await call('POST', '/monitors', { name: 'v', keywords, domains, schedule: 'weekly' });
  t.equal(created.status, 201);
  const id = created.json.monitor_id as string;

  // a week of daily runs, two searches a day for some keywords, a few failed: as the scheduler records them
  let seed = 3;
  const rand = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
  let job = 0;
  for (let d = 0; d < 7; d++) {
    const runId = `run_${String(d).padStart(24, '0')}`;
    const events = keywords.flatMap((keyword, k) =>
      Array.from({ length: 1 + (k % 2) }, (_, i) => {
        const at = new Date(START + d * DAY + (k * 2 + i) * 3_600_000 + Math.floor(rand() * 3_000_000)).toISOString();
        const ok = rand() > 0.1;
        return {
          type: 'MonitorKeywordChecked' as const,
          data: {
            runId,
            monitorId: id,
            keyword,
            jobId: String(job++).padStart(24, '0'),
            checkedAt: at,
            ok,
            ...(ok ? {} : { failure: 'captcha' }),
            ranks: domains.map((domain) => {
              const position = Math.floor(rand() * 25);
              const features = rand() < 0.3 ? ['ai_overview_citation'] : [];
              return !ok
                ? { domain, features: [] }
                : position === 0
                  ? { domain, features }
                  : { domain, position, url: `https://${domain.replace('*.', 'www.')}/${position}`, features };
            }),
            recordedAt: at,
          },
        };
      }),
    );
    await core.eventStore.appendToStream(`monitorRun-${runId}`, events);
  }
  await core.projector.waitFor(await core.eventStore.headPosition());

  const fromHistory = {
    ...core.queries.ranks,
    visibility: (monitorId, range, curve) => visibilityFromHistory(core.readModels, monitorId, range, curve),
  } as RankHistoryQueries;
  const queries = ['', '?from=2026-05-05&to=2026-05-08', '?from=2026-05-05T07:30:00Z&to=2026-05-09T05:00:00Z'];
  const compare = async (when: string) => {
    const doc = core.queries.monitors.byId(id)!;
    const bodies: string[] = [];
    for (const q of queries) {
      const res = await call('GET', `/monitors/${id}/visibility${q}`);
      t.equal(res.status, 200);
      const from = q ? Date.parse(new URLSearchParams(q.slice(1)).get('from')!) : 0;
      const toParam = new URLSearchParams(q.slice(1)).get('to');
      const to = toParam ? (toParam.length === 10 ? Date.parse(toParam) + DAY - 1 : Date.parse(toParam)) : 8.64e15;
      t.strictSame(res.json, visibilityOf(fromHistory, doc, { from, to }), `${when}: ${q || 'the whole history'}`);
      bodies.push(res.body);
    }
    return bodies;
  };

  const first = await compare('as created');
  t.equal(JSON.parse(first[0]).domains[0].days.length, 7, 'a day per day of runs');
  t.match(JSON.parse(first[0]).domains[0].days[0], { date: '2026-05-04', keywords: Number, share_of_voice: Number });

  const edited = await call('PATCH', `/monitors/${id}`, {
    remove_keywords: ['espresso'],
    remove_domains: ['rival.com'],
    ctr_curve: [0.4, 0.2, 0.1],
  });
  t.equal(edited.status, 200, edited.body);
  const after = await compare('after the edits');
  t.same(
    JSON.parse(after[0]).domains.map((d: { domain: string }) => d.domain),
    ['example.com', '*.other.org', 'rival.com'],
    'the removed domain still has its history, after the monitor’s own',
  );
  t.not(after[0], first[0], 'the new curve applies to the whole history');

  await core.projector.stop();
  await rebuildReadModels(core.eventStore, core.readModels, allProjections);
  const rebuilt = await compare('after projections rebuild');
  t.strictSame(rebuilt, after, 'projections rebuild: the same answers');
});
