// The dashboard's monitor view (docs/rank-tracking.md): a key's monitors; per monitor, one keyword's positions over
// time (one line per domain, position 1 at the top, a gap where a search failed, the best ever marked), the
// visibility table, the latest changes and the alerts its runs raised (docs/webhooks.md), those of the shown keyword
// also marked on the chart. Every value is put in the page as text; the chart is SVG built with DOM
// calls and styled by classes only (the page's CSP allows no inline style).

const W = 720;
const H = 260;
const LEFT = 40;
const TOP = 14;
const BOTTOM = 30;
const RIGHT = 12;
const COLORS = 6;

/**
 * Position 1 at the top: y grows with the position; `max` is the lowest position the axis shows. Time runs from the
 * first search shown to the last (searches minutes apart are told apart as well as daily ones).
 */
const scaleOf = (points, depth) => {
  const ranked = points.filter((p) => p.status === 'ranked').map((p) => p.position);
  const max = Math.min(depth, Math.max(10, Math.ceil(Math.max(0, ...ranked) / 10) * 10));
  const times = points.map((p) => Date.parse(p.checked_at));
  const first = Math.min(...times);
  const last = Math.max(...times);
  const pad = last > first ? (last - first) * 0.04 : 60_000;
  const t0 = first - pad;
  const t1 = last + pad;
  const plotH = H - TOP - BOTTOM;
  return {
    max,
    t0,
    t1,
    x: (iso) => LEFT + ((Date.parse(iso) - t0) / (t1 - t0)) * (W - LEFT - RIGHT),
    y: (position) => TOP + ((position - 1) / Math.max(1, max - 1)) * plotH,
    /** where "not in the top `depth`" is drawn: under the axis's last position */
    notRankedY: TOP + plotH + 10,
  };
};

/** consecutive ranked points of a domain: a failed search or a not-ranked one ends a segment (the line breaks) */
const segmentsOf = (points) => {
  const out = [];
  let current = [];
  for (const p of points) {
    if (p.status === 'ranked') {
      current.push(p);
      continue;
    }
    if (current.length) out.push(current);
    current = [];
  }
  if (current.length) out.push(current);
  return out;
};

/** one alert in words: what happened, as `GET /v1/monitors/{id}/alerts` gives it */
export const alertText = (a) => {
  switch (a.kind) {
    case 'moved':
      return `moved ${a.to_position < a.from_position ? 'up' : 'down'} ${Math.abs(a.to_position - a.from_position)}`;
    case 'entered_top':
      return `entered the top ${a.top}`;
    case 'left_top':
      return `left the top ${a.top}`;
    case 'competitor_outranks':
      return `${a.competitor} now ranks above`;
    case 'url_changed':
      return 'another page ranks';
    case 'feature_gained':
      return `gained ${a.feature}`;
    case 'feature_lost':
      return `lost ${a.feature}`;
    case 'fell_below_fold':
      return 'fell below the fold';
    case 'run_failed':
      return `run failed (${(a.failures ?? []).map((f) => `${f.keyword}: ${f.failure}`).join(', ')})`;
    default:
      return a.kind;
  }
};

export const monitorView = ({ api, el, svg, fmt, when, $, status }) => {
  let monitors = [];
  let current;
  let alerts = [];

  const axes = (chart, s) => {
    chart.append(svg('line', { x1: LEFT, y1: TOP, x2: LEFT, y2: H - BOTTOM, class: 'axis' }));
    chart.append(svg('line', { x1: LEFT, y1: H - BOTTOM, x2: W - RIGHT, y2: H - BOTTOM, class: 'axis' }));
    const ticks = [1, ...[10, 20, 30, 50, 100].filter((v) => v <= s.max && v > 1)];
    if (!ticks.includes(s.max)) ticks.push(s.max);
    for (const v of ticks) {
      chart.append(svg('line', { x1: LEFT, y1: s.y(v), x2: W - RIGHT, y2: s.y(v), class: 'grid' }));
      chart.append(svg('text', { x: LEFT - 6, y: s.y(v) + 4, class: 'tick end' }, String(v)));
    }
    chart.append(svg('text', { x: LEFT - 6, y: s.notRankedY + 4, class: 'tick end' }, '–'));
    // UTC: days over a span of days, day and time over hours, time to the second over a few minutes
    const span = s.t1 - s.t0;
    const label = (iso) =>
      span > 4 * 86_400_000 ? iso.slice(5, 10) : span > 3_600_000 ? when(iso).slice(5) : iso.slice(11, 19);
    for (let i = 0; i <= 4; i++) {
      const iso = new Date(s.t0 + ((s.t1 - s.t0) * i) / 4).toISOString();
      chart.append(svg('text', { x: s.x(iso), y: H - BOTTOM + 16, class: `tick ${i === 4 ? 'end' : ''}` }, label(iso)));
    }
  };

  /** the chart of one keyword: one line per domain, gaps at failed searches, a ring on the best position ever */
  const positionsChart = (data, depth) => {
    if (!data.points.length) return [el('p', { class: 'help' }, `No search of "${data.keyword}" in these 90 days.`)];
    const s = scaleOf(data.points, depth);
    const title = `Positions of "${data.keyword}" per domain, ${data.from.slice(0, 10)} to ${data.to.slice(0, 10)}`;
    const chart = svg('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': title, class: 'positions' });
    axes(chart, s);
    // a failed search is a gap in every line, marked once across the plot
    const failed = new Map();
    for (const p of data.points) if (p.status === 'failed') failed.set(p.job_id, p);
    for (const p of failed.values()) {
      const band = svg('line', {
        x1: s.x(p.checked_at),
        y1: TOP,
        x2: s.x(p.checked_at),
        y2: H - BOTTOM,
        class: 'failed-run',
      });
      band.setAttribute('data-failed', p.job_id);
      band.append(svg('title', {}, `${when(p.checked_at)}: the search failed (${p.failure}), no position`));
      chart.append(band);
    }
    const legend = [];
    data.domains.forEach((domain, i) => {
      const cls = `d${i % COLORS}`;
      const points = data.points.filter((p) => p.domain === domain);
      const best = data.best.find((b) => b.domain === domain);
      for (const seg of segmentsOf(points)) {
        const line = svg('polyline', {
          points: seg.map((p) => `${s.x(p.checked_at).toFixed(1)},${s.y(p.position).toFixed(1)}`).join(' '),
          class: `line ${cls}`,
          'data-domain': domain,
        });
        chart.append(line);
      }
      for (const p of points) {
        if (p.status === 'failed') continue;
        const ranked = p.status === 'ranked';
        const dot = svg('circle', {
          cx: s.x(p.checked_at).toFixed(1),
          cy: (ranked ? s.y(p.position) : s.notRankedY).toFixed(1),
          r: 3,
          class: `dot ${cls}${ranked ? '' : ' hollow'}`,
          'data-domain': domain,
          'data-position': ranked ? p.position : 'not_ranked',
          'data-job': p.job_id,
          tabindex: 0,
        });
        // the page Google served that day, with the domain's results outlined (docs/screenshots.md)
        dot.addEventListener('click', () => showDayPage(p));
        dot.addEventListener('keydown', (e) => {
          if (e.key === 'Enter') showDayPage(p);
        });
        dot.append(
          svg('title', {}, `${domain} ${when(p.checked_at)}: ${ranked ? `#${p.position} ${p.url}` : 'not ranked'}`),
        );
        chart.append(dot);
      }
      // the best ever: ringed where it was first reached, when that search is in the chart's range
      const at = best && points.find((p) => p.checked_at === best.at && p.position === best.position);
      if (at) {
        const ring = svg('circle', {
          cx: s.x(at.checked_at).toFixed(1),
          cy: s.y(at.position).toFixed(1),
          r: 7,
          class: `best ${cls}`,
          'data-best': domain,
        });
        ring.append(svg('title', {}, `${domain}: best ever #${best.position} on ${when(best.at)}`));
        chart.append(ring);
      }
      legend.push(
        el(
          'span',
          { class: `legend ${cls}` },
          best ? `${domain} (best ever #${best.position}, ${best.at.slice(0, 10)})` : `${domain} (never ranked)`,
        ),
      );
    });
    // the alerts of this keyword (and failed runs), a mark on the top edge at the search that raised them
    const marked = alerts.filter(
      (a) => (a.keyword === data.keyword || a.kind === 'run_failed') && a.at >= data.from && a.at <= data.to,
    );
    // a fold alert is marked apart from the rank alerts: it says where the result lay on the page, not its rank
    // (docs/rank-tracking.md#pixel-positions)
    for (const a of marked) {
      const x = s.x(a.at);
      const mark = svg('polygon', {
        points: `${(x - 5).toFixed(1)},${TOP - 10} ${(x + 5).toFixed(1)},${TOP - 10} ${x.toFixed(1)},${TOP - 2}`,
        class: a.kind === 'fell_below_fold' ? 'alert-mark fold-mark' : 'alert-mark',
        'data-alert': a.alert_id,
      });
      mark.append(svg('title', {}, `${when(a.at)}: ${[a.domain, alertText(a)].filter(Boolean).join(' ')}`));
      chart.append(mark);
    }
    const folds = marked.filter((a) => a.kind === 'fell_below_fold').length;
    if (failed.size) legend.push(el('span', { class: 'legend failed-run' }, `failed search (${failed.size})`));
    if (marked.length > folds)
      legend.push(el('span', { class: 'legend alert-mark' }, `alert (${marked.length - folds})`));
    if (folds) legend.push(el('span', { class: 'legend fold-mark' }, `fell below the fold (${folds})`));
    legend.push(el('span', { class: 'legend best-ring' }, 'best ever'));
    return [chart, el('figcaption', {}, ...legend)];
  };

  const renderVisibility = (summary) => {
    const rows = summary.visibility
      .flatMap((d) => d.days.map((day) => ({ domain: d.domain, ...day })))
      .sort((a, b) => (a.date < b.date ? 1 : a.date > b.date ? -1 : 0));
    $('#visibility-table tbody').replaceChildren(
      ...(rows.length
        ? rows.map((r) =>
            el(
              'tr',
              {},
              el('td', {}, r.date),
              el('td', {}, r.domain),
              el('td', { class: 'num' }, fmt.format(r.keywords)),
              el('td', { class: 'num' }, r.average_position === null ? '–' : r.average_position.toFixed(1)),
              el('td', { class: 'num' }, fmt.format(r.ranked)),
              el('td', { class: 'num' }, fmt.format(r.top3)),
              el('td', { class: 'num' }, fmt.format(r.top10)),
              el('td', { class: 'num' }, fmt.format(r.top100)),
              el('td', { class: 'num' }, `${(r.share_of_voice * 100).toFixed(1)} %`),
              el('td', { class: 'num' }, fmt.format(r.ai_overview_citations)),
              // a monitor with pixel positions: the share of the day's measured keywords on the first screen
              el(
                'td',
                { class: 'num', 'data-fold': r.above_the_fold_share ?? '' },
                r.above_the_fold_share === undefined
                  ? '–'
                  : `${(r.above_the_fold_share * 100).toFixed(1)} % (${fmt.format(r.above_the_fold)})`,
              ),
            ),
          )
        : [el('tr', {}, el('td', { colspan: 11 }, 'No successful search in these 30 days.'))]),
    );
  };

  const changeText = (c) =>
    c.kind === 'entered' || c.kind === 'left'
      ? `${c.kind} the top ${c.top}`
      : c.kind === 'feature_gained' || c.kind === 'feature_lost'
        ? `${c.kind === 'feature_gained' ? 'gained' : 'lost'} ${c.feature}`
        : c.kind === 'url_changed'
          ? 'another page ranks'
          : `moved ${c.to_position < c.from_position ? 'up' : 'down'} ${Math.abs(c.to_position - c.from_position)}`;

  const renderChanges = (summary) => {
    $('#changes-table tbody').replaceChildren(
      ...(summary.changes.length
        ? summary.changes.map((c) =>
            el(
              'tr',
              {},
              el('td', {}, when(c.at)),
              el('td', {}, c.keyword),
              el('td', {}, c.domain),
              el('td', {}, changeText(c)),
              el('td', { class: 'num' }, c.from_position ?? '–'),
              el('td', { class: 'num' }, c.to_position ?? '–'),
              el('td', {}, c.to_url ?? ''),
            ),
          )
        : [el('tr', {}, el('td', { colspan: 7 }, 'No change in these 30 days.'))]),
    );
  };

  const renderAlerts = () => {
    $('#alerts-table tbody').replaceChildren(
      ...(alerts.length
        ? alerts.map((a) =>
            el(
              'tr',
              a.kind === 'fell_below_fold'
                ? { 'data-alert': a.alert_id, 'data-kind': a.kind, class: 'fold-alert' }
                : { 'data-alert': a.alert_id, 'data-kind': a.kind },
              el('td', {}, when(a.at)),
              el('td', {}, alertText(a)),
              el('td', {}, a.keyword ?? '–'),
              el('td', {}, a.domain ?? '–'),
              el('td', { class: 'num' }, a.from_position ?? '–'),
              el('td', { class: 'num' }, a.to_position ?? '–'),
            ),
          )
        : [el('tr', {}, el('td', { colspan: 6 }, 'No alert in these 30 days.'))]),
    );
  };

  /** whether `link`'s host is `domain` or under it (a monitor's `*.example.org` is example.org's subdomains) */
  const onDomain = (link, domain) => {
    try {
      const host = new URL(link).hostname.toLowerCase();
      const base = domain.replace(/^\*\./, '');
      return host === base || host.endsWith(`.${base}`);
    } catch {
      return false;
    }
  };

  /**
   * A history point's page: the page of that search as Google served it, rendered from the stored page, with the
   * point's domain's organic results outlined where they lay and the fold (the first screen's bottom) marked.
   */
  const showDayPage = async (p) => {
    $('#day-page').hidden = false;
    $('#day-page-h').textContent =
      `"${p.keyword}" on ${when(p.checked_at)}: the page as Google served it, ${p.domain}'s results outlined`;
    const figure = $('#day-page-figure');
    figure.replaceChildren(el('p', { class: 'help' }, 'Rendering the page…'));
    let data;
    try {
      data = await api('GET', `/jobs/${encodeURIComponent(p.job_id)}/positions`);
    } catch (err) {
      figure.replaceChildren(el('p', { class: 'help' }, `No page to show: ${err.message}`));
      return;
    }
    const { viewport, page_height: pageHeight } = data.pixel_positions;
    const height = Math.min(pageHeight, 16384);
    const label = `The page of "${p.keyword}" on ${when(p.checked_at)}`;
    const pic = svg('svg', {
      viewBox: `0 0 ${viewport.width} ${height}`,
      role: 'img',
      'aria-label': label,
      class: 'day-page',
    });
    pic.append(
      svg('image', {
        href: `/admin/api/jobs/${encodeURIComponent(p.job_id)}/screenshot`,
        x: 0,
        y: 0,
        width: viewport.width,
        height,
      }),
    );
    pic.append(svg('line', { x1: 0, y1: viewport.height, x2: viewport.width, y2: viewport.height, class: 'fold' }));
    for (const r of data.organic_results) {
      if (!r.rectangle || !onDomain(r.link, p.domain)) continue;
      const box = svg('rect', { ...r.rectangle, class: 'outline', 'data-position': r.position });
      box.append(svg('title', {}, `#${r.position} ${r.link}: ${r.rectangle.y} px from the top`));
      pic.append(box);
    }
    figure.replaceChildren(pic);
  };

  const showChart = async (monitor, keyword) => {
    const q = new URLSearchParams({ keyword, days: '90' });
    const data = await api('GET', `/monitors/${encodeURIComponent(monitor.monitor_id)}/positions?${q}`);
    $('#positions-chart').replaceChildren(...positionsChart(data, monitor.depth));
  };

  const showMonitor = async (monitorId) => {
    const monitor = monitors.find((m) => m.monitor_id === monitorId);
    if (!monitor) return;
    current = monitorId;
    renderList();
    $('#monitor-detail').hidden = false;
    $('#monitor-h').textContent =
      `Monitor ${monitor.name} (${monitor.keywords.length} keywords, depth ${monitor.depth})`;
    const select = $('#monitor-keyword');
    select.replaceChildren(...monitor.keywords.map((k) => el('option', { value: k }, k)));
    const summary = await api('GET', `/monitors/${encodeURIComponent(monitorId)}/summary?days=30`);
    alerts = summary.alerts;
    renderAlerts();
    await showChart(monitor, monitor.keywords[0]);
    renderVisibility(summary);
    renderChanges(summary);
  };

  const schedule = (s) => (typeof s === 'string' ? s : `${s.cron} (${s.timezone})`);

  const renderList = () => {
    $('#monitors-table tbody').replaceChildren(
      ...(monitors.length
        ? monitors.map((m) =>
            el(
              'tr',
              { class: m.monitor_id === current ? 'selected' : undefined },
              el('td', {}, m.name),
              el('td', { class: 'num' }, fmt.format(m.keywords.length)),
              el('td', {}, m.domains.join(', ')),
              el('td', {}, m.paused ? `${schedule(m.schedule)}, paused` : schedule(m.schedule)),
              el('td', {}, when(m.last_run_at) || '–'),
              el('td', {}, when(m.next_run_at) || '–'),
              el(
                'td',
                { class: 'actions' },
                el('button', { type: 'button', class: 'link', 'data-monitor': m.monitor_id }, 'Positions'),
              ),
            ),
          )
        : [el('tr', {}, el('td', { colspan: 7 }, 'This key has no monitor.'))]),
    );
  };

  /** the key's monitors; the first one's detail is shown until another is picked */
  const showKey = async (keyId) => {
    const list = await api('GET', `/keys/${encodeURIComponent(keyId)}/monitors`);
    monitors = list.monitors;
    current = undefined;
    $('#monitor-detail').hidden = true;
    renderList();
  };

  $('#monitors-table').addEventListener('click', (ev) => {
    const button = ev.target.closest('[data-monitor]');
    if (button) showMonitor(button.dataset.monitor).catch((err) => status(err.message, 'error'));
  });
  $('#monitor-keyword').addEventListener('change', (ev) => {
    const monitor = monitors.find((m) => m.monitor_id === current);
    if (monitor) showChart(monitor, ev.target.value).catch((err) => status(err.message, 'error'));
  });

  return { showKey };
};
