// The admin dashboard: plain browser JavaScript, no build step. It talks to /admin/api with the session cookie and
// the page's CSRF token; every value from the server is put in the page as text (textContent), never as HTML.
import { monitorView } from './monitors.js';

const csrf = document.querySelector('meta[name="csrf-token"]').content;
const $ = (sel, root = document) => root.querySelector(sel);
const el = (tag, attrs = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v !== undefined && v !== null && v !== false) node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c ?? '')));
  return node;
};
const svg = (tag, attrs = {}, ...children) => {
  const node = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
};
const fmt = new Intl.NumberFormat('en');
const day = (iso) => (iso ? iso.slice(0, 10) : '');
const when = (iso) => (iso ? iso.replace('T', ' ').slice(0, 16) : '');
const ago = (ms) => {
  const s = Math.max(0, Math.round(ms / 1000));
  return s < 120 ? `${s} s` : s < 7200 ? `${Math.round(s / 60)} min` : `${(s / 3600).toFixed(1)} h`;
};

const status = (text, kind = 'info') => {
  const s = $('#status');
  s.textContent = text;
  s.className = kind;
};

class ApiFailure extends Error {}

const api = async (method, path, body) => {
  const res = await fetch(`/admin/api${path}`, {
    method,
    credentials: 'same-origin',
    headers: {
      accept: 'application/json',
      'x-csrf-token': csrf,
      ...(body ? { 'content-type': 'application/json' } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  });
  if (res.status === 401) {
    window.location.assign('/admin');
    throw new ApiFailure('signed out');
  }
  const data = await res.json().catch(() => ({}));
  if (!res.ok) throw new ApiFailure(data.detail ?? `${res.status} ${res.statusText}`);
  return data;
};

const monitors = monitorView({ api, el, svg, fmt, when, $, status });

let keys = [];
let tiers = [];
let selected;

const tierOptions = (select, current) => {
  select.replaceChildren(...tiers.map((t) => el('option', { value: t.name, selected: t.name === current }, t.name)));
};

const matches = (k, q) =>
  !q || [k.prefix, k.label ?? '', k.tier, k.status, k.key_id].some((v) => v.toLowerCase().includes(q));

const renderKeys = () => {
  const q = $('#filter').value.trim().toLowerCase();
  const rows = keys
    .filter((k) => matches(k, q))
    .map((k) => {
      const view = el('button', { type: 'button', class: 'link', 'data-view': k.key_id }, 'Details');
      const revoke =
        k.status === 'active'
          ? el('button', { type: 'button', class: 'danger small', 'data-revoke': k.key_id }, 'Revoke')
          : '';
      return el(
        'tr',
        { class: k.key_id === selected ? 'selected' : undefined },
        el('td', {}, el('code', {}, k.prefix)),
        el('td', {}, k.label ?? ''),
        el('td', {}, k.tier),
        el('td', { class: 'num' }, k.monthly_quota === 0 ? 'unlimited' : fmt.format(k.monthly_quota)),
        el('td', { class: 'num' }, fmt.format(k.used_this_month)),
        el('td', { class: 'num' }, k.remaining === null ? '∞' : fmt.format(k.remaining)),
        el('td', { class: 'num' }, fmt.format(k.rate_limit_per_min)),
        el('td', {}, el('span', { class: `badge ${k.status}` }, k.status)),
        el('td', {}, day(k.issued_at)),
        el('td', { class: 'actions' }, view, revoke),
      );
    });
  $('#keys-table tbody').replaceChildren(
    ...(rows.length ? rows : [el('tr', {}, el('td', { colspan: 10 }, q ? 'No key matches.' : 'No keys yet.'))]),
  );
};

const loadKeys = async () => {
  keys = (await api('GET', '/keys')).keys;
  renderKeys();
};

/** a bar chart as SVG with a text alternative: one bar per item, stacked by series */
const barChart = (items, series, label, title) => {
  const w = 720;
  const h = 180;
  const pad = 24;
  const max = Math.max(1, ...items.map((it) => series.reduce((n, s) => n + (it[s.key] ?? 0), 0)));
  const bw = (w - pad) / items.length;
  const chart = svg('svg', { viewBox: `0 0 ${w} ${h + pad}`, role: 'img', 'aria-label': title });
  chart.append(svg('line', { x1: pad, y1: h, x2: w, y2: h, class: 'axis' }));
  chart.append(svg('text', { x: 0, y: 12, class: 'tick' }, fmt.format(max)));
  items.forEach((it, i) => {
    let y = h;
    for (const s of series) {
      const v = it[s.key] ?? 0;
      if (!v) continue;
      const bh = (v / max) * (h - 16);
      y -= bh;
      const rect = svg('rect', { x: pad + i * bw + 1, y, width: Math.max(1, bw - 2), height: bh, class: s.cls });
      rect.append(svg('title', {}, `${label(it)}: ${fmt.format(v)} ${s.name}`));
      chart.append(rect);
    }
    if (i % Math.ceil(items.length / 6) === 0) {
      chart.append(svg('text', { x: pad + i * bw, y: h + 16, class: 'tick' }, label(it)));
    }
  });
  const legend = el('figcaption', {}, ...series.map((s) => el('span', { class: `legend ${s.cls}` }, s.name)));
  return [chart, legend];
};

const showKey = async (keyId) => {
  selected = keyId;
  renderKeys();
  const key = keys.find((k) => k.key_id === keyId);
  if (!key) return;
  const section = $('#key-detail');
  section.hidden = false;
  $('#detail-h').textContent = `Key ${key.prefix}${key.label ? ` — ${key.label}` : ''} (${key.status})`;
  const form = $('#limits');
  tierOptions(form.elements.tier, key.tier);
  form.elements.monthly_quota.value = key.monthly_quota;
  form.elements.rate_limit_per_min.value = key.rate_limit_per_min;
  for (const c of form.elements) c.disabled = key.status !== 'active';
  const [usage, jobs] = await Promise.all([api('GET', `/keys/${keyId}/usage`), api('GET', `/keys/${keyId}/jobs`)]);
  const days = usage.days.map((d) => ({ ...d, charged: Math.max(0, d.reserved - d.released), free: d.cached }));
  const total = days.reduce((n, d) => n + d.searches, 0);
  $('#usage-chart').replaceChildren(
    ...barChart(
      days,
      [
        { key: 'charged', name: 'charged', cls: 's-charged' },
        { key: 'free', name: 'from cache', cls: 's-cached' },
      ],
      (d) => d.day.slice(5),
      `Searches per day for ${key.prefix}, last 30 days: ${fmt.format(total)} in all`,
    ),
  );
  $('#jobs-table tbody').replaceChildren(
    ...(jobs.jobs.length
      ? jobs.jobs.map((j) =>
          el(
            'tr',
            {},
            el('td', {}, when(j.submitted_at)),
            el('td', {}, j.keyword),
            el('td', {}, el('span', { class: `badge ${j.status}` }, j.cached ? `${j.status} (cache)` : j.status)),
            el('td', {}, j.failure_kind ?? ''),
            el('td', { class: 'num' }, j.pages ?? ''),
            el('td', {}, el('code', {}, j.job_id)),
          ),
        )
      : [el('tr', {}, el('td', { colspan: 6 }, 'No jobs in the retention window.'))]),
  );
  await monitors.showKey(keyId);
};

const loadService = async () => {
  const s = await api('GET', '/service');
  $('#cache-rate').textContent = s.cache_hit_rate === null ? 'no searches' : `${(s.cache_hit_rate * 100).toFixed(1)} %`;
  // the lanes summed, from the same read as the lanes table below (docs/operations.md#admin-dashboard)
  $('#queue-depth').textContent = `${fmt.format(s.jobs.waiting)} waiting, ${fmt.format(s.jobs.crawling)} crawling`;
  $('#queue-age').textContent = s.jobs.oldest_waiting_since
    ? `${ago(Date.parse(s.now) - Date.parse(s.jobs.oldest_waiting_since))} (since ${when(s.jobs.oldest_waiting_since)})`
    : 'none waiting';
  $('#projection-lag').textContent = s.projection_lag === null ? '–' : `${fmt.format(s.projection_lag)} events`;
  renderRoutes(s.routes);
  renderLanes(s.lanes);
  renderDemand(s.demand, s.capacity);
  const o = s.webhook_outbox;
  $('#outbox-depth').textContent =
    o.pending === 0
      ? 'empty'
      : `${fmt.format(o.pending)} waiting (${fmt.format(o.due)} due, ${fmt.format(o.retrying)} retrying, ${fmt.format(o.sending)} sending)`;
  $('#outbox-age').textContent = o.oldest_scheduled_at ? when(o.oldest_scheduled_at) : '–';
  const hours = s.hours.map((h) => ({
    ...h,
    failedAll: Object.values(h.failed).reduce((n, v) => n + v, 0),
  }));
  $('#hours-chart').replaceChildren(
    ...barChart(
      hours,
      [
        { key: 'done', name: 'done', cls: 's-done' },
        { key: 'partial', name: 'partial', cls: 's-partial' },
        { key: 'failedAll', name: 'failed', cls: 's-failed' },
        { key: 'cached', name: 'from cache', cls: 's-cached' },
      ],
      (h) => `${h.hour.slice(11)}h`,
      'Jobs per hour by outcome over the last 24 hours',
    ),
  );
  $('#hours-table tbody').replaceChildren(
    ...hours
      .filter((h) => h.submitted || h.cached || h.done || h.partial || h.failedAll)
      .reverse()
      .map((h) =>
        el(
          'tr',
          {},
          el('td', {}, `${h.hour.replace('T', ' ')}:00`),
          el('td', { class: 'num' }, fmt.format(h.submitted)),
          el('td', { class: 'num' }, fmt.format(h.cached)),
          el('td', { class: 'num' }, fmt.format(h.done)),
          el('td', { class: 'num' }, fmt.format(h.partial)),
          el(
            'td',
            {},
            Object.entries(h.failed)
              .map(([k, v]) => `${k} ${v}`)
              .join(', ') || '0',
          ),
        ),
      ),
  );
};

// jobs not yet ended per lane, and the keys they belong to, most pages waiting first (docs/fleet.md#lanes-and-fair-share)
const renderLanes = (lanes) => {
  $('#lanes-table tbody').replaceChildren(
    ...lanes.map((l) =>
      el(
        'tr',
        {},
        el('th', { scope: 'row' }, l.lane),
        el('td', { class: 'num' }, fmt.format(l.waiting)),
        el('td', { class: 'num' }, fmt.format(l.waiting_pages)),
        el('td', { class: 'num' }, fmt.format(l.crawling)),
        el(
          'td',
          {},
          l.top_keys.length
            ? l.top_keys
                .map(
                  (k) =>
                    `${k.prefix ?? k.key_id}${k.label ? ` (${k.label})` : ''}: ${fmt.format(k.waiting)} waiting, ${fmt.format(k.crawling)} crawling`,
                )
                .join('; ')
            : '–',
        ),
      ),
    ),
  );
};

// pages asked per hour (the last day as submitted, the next as the monitors plan) against what the fleet can crawl
const renderDemand = (hours, capacity) => {
  const perHour = capacity.pages_per_minute === null ? undefined : capacity.pages_per_minute * 60;
  $('#capacity-note').textContent =
    perHour === undefined
      ? 'Capacity not known yet: no crawl has reported.'
      : `The fleet can crawl about ${fmt.format(Math.round(perHour))} pages an hour (${capacity.routes} route${capacity.routes === 1 ? '' : 's'}${capacity.cooling ? `, ${capacity.cooling} resting` : ''}; ${capacity.basis === 'paced' ? 'their paces now' : 'the busiest minute of the last hour'}). Live searches took up to ${fmt.format(capacity.live_peak_pages_per_hour)} page${capacity.live_peak_pages_per_hour === 1 ? '' : 's'} in an hour of the last day.`;
  $('#demand-chart').replaceChildren(...demandChart(hours, perHour));
};

const DEMAND_SERIES = [
  { key: 'live', name: 'live', cls: 's-done' },
  { key: 'scheduled', name: 'monitors', cls: 's-partial' },
  { key: 'bulk', name: 'bulk', cls: 's-cached' },
];

// Demand against capacity on a log scale (docs/operations.md#admin-dashboard): capacity is thousands of pages an hour
// and a lane's demand may be a few, so a linear scale draws demand as nothing. Each gridline is ten times the one
// below; the lanes stand side by side in each hour (stacking is meaningless on a log scale); a bar of 1 page is
// still about 10 px tall. Each bar carries its lane and value (data-series, data-value) and a tooltip.
const demandChart = (hours, perHour) => {
  const w = 720;
  const h = 180;
  const left = 44;
  const bottom = 24;
  const top =
    10 **
    Math.max(
      1,
      Math.ceil(
        Math.log10(Math.max(1, perHour ?? 0, ...hours.flatMap((it) => DEMAND_SERIES.map((s) => it[s.key] ?? 0))) + 1),
      ),
    );
  const y = (v) => h - (Math.log10(1 + v) / Math.log10(1 + top)) * (h - 8);
  const slot = (w - left) / hours.length;
  const bw = Math.max(1, (slot - 2) / DEMAND_SERIES.length);
  const chart = svg('svg', {
    viewBox: `0 0 ${w} ${h + bottom}`,
    role: 'img',
    'aria-label': `Google pages asked per hour by lane, the last ${hours.filter((it) => !it.planned).length} hours and the monitors' next ${hours.filter((it) => it.planned).length} (+), against the fleet's capacity${perHour === undefined ? ' (not known yet)' : ` of ${fmt.format(Math.round(perHour))} an hour`}; log scale`,
    class: 'demand',
  });
  for (let v = 1; v <= top; v *= 10) {
    chart.append(svg('line', { x1: left, y1: y(v), x2: w, y2: y(v), class: 'grid' }));
    chart.append(svg('text', { x: left - 4, y: y(v) + 4, class: 'tick end' }, fmt.format(v)));
  }
  chart.append(svg('line', { x1: left, y1: h, x2: w, y2: h, class: 'axis' }));
  chart.append(svg('text', { x: left - 4, y: h + 4, class: 'tick end' }, '0'));
  hours.forEach((it, i) => {
    const x0 = left + i * slot + 1;
    if (it.planned && (i === 0 || !hours[i - 1].planned)) {
      const now = svg('line', { x1: x0 - 1, y1: 0, x2: x0 - 1, y2: h, class: 'now' });
      now.append(svg('title', {}, 'now: to the right, what the monitors plan'));
      chart.append(now);
    }
    DEMAND_SERIES.forEach((s, j) => {
      const v = it[s.key] ?? 0;
      if (!v) return;
      const rect = svg('rect', {
        x: x0 + j * bw,
        y: y(v),
        width: Math.max(1, bw - 0.5),
        height: h - y(v),
        class: `${s.cls}${it.planned ? ' planned' : ''}`,
        'data-series': s.key,
        'data-value': v,
      });
      rect.append(
        svg(
          'title',
          {},
          `${it.hour.replace('T', ' ')}:00 UTC${it.planned ? ' (planned)' : ''}: ${fmt.format(v)} pages ${s.name}`,
        ),
      );
      chart.append(rect);
    });
    if (i % 6 === 0) {
      chart.append(svg('text', { x: x0, y: h + 16, class: 'tick' }, `${it.planned ? '+' : ''}${it.hour.slice(11)}h`));
    }
  });
  if (perHour !== undefined) {
    const level = svg('line', { x1: left, y1: y(perHour), x2: w, y2: y(perHour), class: 's-capacity' });
    level.append(svg('title', {}, `capacity: ${fmt.format(Math.round(perHour))} pages an hour`));
    chart.append(level);
  }
  const names = [...DEMAND_SERIES, ...(perHour === undefined ? [] : [{ name: 'capacity', cls: 's-capacity' }])];
  const legend = el(
    'figcaption',
    {},
    ...names.map((s) => el('span', { class: `legend ${s.cls}` }, s.name)),
    el(
      'span',
      { class: 'legend-note' },
      'pages an hour, log scale: each line is 10× the one below; paler bars are planned',
    ),
  );
  return [chart, legend];
};

// the routes of the running fleet a crawl reported in the last hour (docs/operations.md#admin-dashboard): pace, blocks, whether one rests after a block, and
// the pages Google placed elsewhere through it (docs/locations.md): a route that keeps doing so is marked
const renderRoutes = (routes) => {
  $('#routes-table tbody').replaceChildren(
    ...(routes.length
      ? routes.map((r) =>
          el(
            'tr',
            {
              class:
                [r.cooling_until ? 'cooling' : '', r.places_elsewhere ? 'misplacing' : ''].join(' ').trim() ||
                undefined,
            },
            el('td', {}, r.proxy ? `${r.route} (${r.proxy})` : r.route),
            el('td', { class: 'num' }, r.rate_rpm === null ? 'unpaced' : r.rate_rpm.toFixed(1)),
            el('td', { class: 'num' }, fmt.format(r.requests_last_hour)),
            el('td', { class: 'num' }, fmt.format(r.blocks_last_hour)),
            el(
              'td',
              { class: 'num placed' },
              r.placed_last_hour ? `${fmt.format(r.misplaced_last_hour)} of ${fmt.format(r.placed_last_hour)}` : '–',
              ...(r.places_elsewhere
                ? [el('span', { class: 'badge warn' }, 'places searches elsewhere: drop it for local work')]
                : []),
              // what located searches learnt of it, by place (docs/locations.md#how-routes-are-chosen)
              ...(r.places ?? []).map((p) =>
                el(
                  'span',
                  { class: `route-place${p.avoided ? ' badge warn' : ''}` },
                  `${p.country} ${p.level}: honours ${Math.round(p.honour * 100)}%${p.avoided ? ', set aside' : ''}`,
                ),
              ),
            ),
            el('td', {}, r.cooling_until ? when(r.cooling_until) + r.cooling_until.slice(16, 19) : '–'),
          ),
        )
      : [el('tr', {}, el('td', { colspan: 6 }, 'No route of the running fleet reported a crawl in the last hour.'))]),
  );
};

const numberOrUndefined = (input) => (input.value.trim() === '' ? undefined : Number(input.value));

$('#mint').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const form = ev.currentTarget;
  const f = form.elements;
  try {
    const created = await api('POST', '/keys', {
      tier: f.tier.value,
      ...(f.label.value.trim() ? { label: f.label.value.trim() } : {}),
      ...(numberOrUndefined(f.monthly_quota) !== undefined
        ? { monthly_quota: numberOrUndefined(f.monthly_quota) }
        : {}),
      ...(numberOrUndefined(f.rate_limit_per_min) !== undefined
        ? { rate_limit_per_min: numberOrUndefined(f.rate_limit_per_min) }
        : {}),
    });
    $('#minted-key').textContent = created.key;
    $('#minted').hidden = false;
    $('#copy-key').focus();
    form.reset();
    tierOptions(f.tier, tiers[0]?.name);
    status(`Minted ${created.prefix}. Copy the key now: it is not shown again.`, 'ok');
    await loadKeys();
  } catch (err) {
    status(`Mint failed: ${err.message}`, 'error');
  }
});

$('#copy-key').addEventListener('click', async () => {
  try {
    await navigator.clipboard.writeText($('#minted-key').textContent);
    status('Key copied to the clipboard.', 'ok');
  } catch {
    const range = document.createRange();
    range.selectNodeContents($('#minted-key'));
    getSelection().removeAllRanges();
    getSelection().addRange(range);
    status('Select-and-copy: the key is selected.', 'info');
  }
});

$('#filter').addEventListener('input', renderKeys);

$('#keys-table').addEventListener('click', async (ev) => {
  const view = ev.target.closest('[data-view]');
  const revoke = ev.target.closest('[data-revoke]');
  try {
    if (view) await showKey(view.dataset.view);
    if (revoke) {
      const key = keys.find((k) => k.key_id === revoke.dataset.revoke);
      const dialog = $('#confirm');
      $('#confirm-text').textContent =
        `Key ${key.prefix}${key.label ? ` (${key.label})` : ''} gets 401 on its next request. This cannot be undone.`;
      dialog.returnValue = '';
      dialog.showModal();
      dialog.addEventListener(
        'close',
        async () => {
          if (dialog.returnValue !== 'revoke') return revoke.focus();
          try {
            await api('POST', `/keys/${key.key_id}/revoke`);
            status(`Revoked ${key.prefix}.`, 'ok');
            await loadKeys();
            if (selected === key.key_id) await showKey(key.key_id);
          } catch (err) {
            status(`Revoke failed: ${err.message}`, 'error');
          }
        },
        { once: true },
      );
    }
  } catch (err) {
    status(err.message, 'error');
  }
});

$('#limits').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const f = ev.currentTarget.elements;
  const key = keys.find((k) => k.key_id === selected);
  if (!key) return;
  const change = {};
  if (f.tier.value !== key.tier) change.tier = f.tier.value;
  const quota = numberOrUndefined(f.monthly_quota);
  if (quota !== undefined && quota !== key.monthly_quota) change.monthly_quota = quota;
  const rate = numberOrUndefined(f.rate_limit_per_min);
  if (rate !== undefined && rate !== key.rate_limit_per_min) change.rate_limit_per_min = rate;
  if (!Object.keys(change).length) return status('Nothing changed.', 'info');
  try {
    await api('PATCH', `/keys/${key.key_id}`, change);
    status(`Limits of ${key.prefix} saved: they apply from its next request.`, 'ok');
    await loadKeys();
    await showKey(key.key_id);
  } catch (err) {
    status(`Saving limits failed: ${err.message}`, 'error');
  }
});

const start = async () => {
  try {
    tiers = (await api('GET', '/tiers')).tiers;
    tierOptions($('#mint').elements.tier, tiers[0]?.name);
    await Promise.all([loadKeys(), loadService()]);
    setInterval(() => loadService().catch(() => undefined), 10_000);
  } catch (err) {
    status(err.message, 'error');
  }
};
start();
