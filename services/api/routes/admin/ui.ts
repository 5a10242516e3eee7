import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ErrorBody } from '../../../../contracts/errors.js';
import type { AdminSessionCommands } from '../../../application/adminSessions.js';
import type { AuthFailureGate } from '../../auth.js';
import {
  clearSessionCookies,
  SESSION_MS,
  type SessionCheck,
  sessionIdOf,
  setSessionCookie,
  tokenMatches,
} from './session.js';

/** the dashboard's pages run only our own files: no inline script or style, no other origin, never framed */
export const DASHBOARD_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
  "form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

const ASSETS = {
  'dashboard.js': 'text/javascript; charset=utf-8',
  'monitors.js': 'text/javascript; charset=utf-8',
  'dashboard.css': 'text/css; charset=utf-8',
};
type AssetName = keyof typeof ASSETS;

/** public/admin beside package.json, from the sources (services/api/routes/admin) or the build (dist/…) */
const assetDir = () => {
  for (const up of ['../../../../public/admin/', '../../../../../public/admin/']) {
    const url = new URL(up, import.meta.url);
    if (existsSync(new URL('dashboard.js', url))) return url;
  }
  throw new Error('public/admin/dashboard.js not found beside package.json');
};

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

const page = (title: string, body: string, csrf: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="csrf-token" content="${escapeHtml(csrf)}">
<title>${escapeHtml(title)} · SERP API admin</title>
<link rel="stylesheet" href="/admin/assets/dashboard.css">
</head>
<body>
${body}
</body>
</html>
`;

const signInPage = (csrf: string, error?: string) =>
  page(
    'Sign in',
    `<main class="signin">
<h1>SERP API admin</h1>
<form method="post" action="/admin/session">
<input type="hidden" name="_csrf" value="${escapeHtml(csrf)}">
<label for="token">Admin token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required autofocus
  aria-describedby="token-help${error ? ' signin-error' : ''}">
<p id="token-help" class="help">SERP_ADMIN_TOKEN, printed once when the service first started (or .data/secrets.json).</p>
${error ? `<p id="signin-error" class="error" role="alert">${escapeHtml(error)}</p>` : ''}
<button type="submit">Sign in</button>
</form>
</main>`,
    csrf,
  );

const dashboardPage = (csrf: string) =>
  page(
    'Dashboard',
    `<header>
<h1>SERP API admin</h1>
<nav aria-label="Sections"><a href="#keys">Keys</a> <a href="#service">Service</a></nav>
<form method="post" action="/admin/session/end"><input type="hidden" name="_csrf" value="${escapeHtml(csrf)}"><button type="submit" class="secondary">Sign out</button></form>
</header>
<main>
<p id="status" role="status" aria-live="polite"></p>
<section id="keys" aria-labelledby="keys-h">
<h2 id="keys-h">Keys</h2>
<form id="mint" aria-labelledby="mint-h">
<h3 id="mint-h">Mint a key</h3>
<div class="row">
<label>Tier <select name="tier" required></select></label>
<label>Label <input name="label" maxlength="200" autocomplete="off"></label>
<label>Monthly quota <input name="monthly_quota" type="number" min="0" step="1" placeholder="tier default"></label>
<label>Rate per minute <input name="rate_limit_per_min" type="number" min="1" step="1" placeholder="tier default"></label>
<button type="submit">Mint</button>
</div>
</form>
<div id="minted" class="minted" hidden>
<p><strong>New key</strong> (shown once, never again): <code id="minted-key"></code>
<button type="button" id="copy-key">Copy</button></p>
</div>
<label class="filter">Filter <input id="filter" type="search" placeholder="prefix, label, tier or status" autocomplete="off"></label>
<div class="table-wrap">
<table id="keys-table">
<caption class="sr-only">API keys</caption>
<thead><tr><th scope="col">Prefix</th><th scope="col">Label</th><th scope="col">Tier</th><th scope="col">Monthly quota</th><th scope="col">Used this month</th><th scope="col">Remaining</th><th scope="col">Rate / min</th><th scope="col">Status</th><th scope="col">Created</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
<tbody></tbody>
</table>
</div>
<section id="key-detail" aria-labelledby="detail-h" hidden>
<h3 id="detail-h">Key</h3>
<form id="limits" aria-label="Change limits">
<div class="row">
<label>Tier <select name="tier"></select></label>
<label>Monthly quota <input name="monthly_quota" type="number" min="0" step="1"></label>
<label>Rate per minute <input name="rate_limit_per_min" type="number" min="1" step="1"></label>
<button type="submit">Save limits</button>
</div>
</form>
<h4>Searches per day, last 30 days</h4>
<figure id="usage-chart" class="chart"></figure>
<h4>Recent jobs</h4>
<div class="table-wrap">
<table id="jobs-table">
<caption class="sr-only">Recent jobs of this key</caption>
<thead><tr><th scope="col">Submitted</th><th scope="col">Keyword</th><th scope="col">Status</th><th scope="col">Failure</th><th scope="col">Pages</th><th scope="col">Job id</th></tr></thead>
<tbody></tbody>
</table>
</div>
<h4 id="monitors-h">Monitors (rank tracking)</h4>
<div class="table-wrap">
<table id="monitors-table" aria-labelledby="monitors-h">
<thead><tr><th scope="col">Name</th><th scope="col">Keywords</th><th scope="col">Domains</th><th scope="col">Schedule</th><th scope="col">Last run</th><th scope="col">Next run</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
<tbody></tbody>
</table>
</div>
<section id="monitor-detail" aria-labelledby="monitor-h" hidden>
<h4 id="monitor-h">Monitor</h4>
<label class="filter">Keyword <select id="monitor-keyword"></select></label>
<h5>Positions, last 90 days (1 at the top; a gap is a failed search)</h5>
<figure id="positions-chart" class="chart"></figure>
<section id="day-page" aria-labelledby="day-page-h" hidden>
<h5 id="day-page-h">The page</h5>
<figure id="day-page-figure" class="chart"></figure>
</section>
<h5 id="alerts-h">Alerts, last 30 days (newest first; those of this keyword are marked on the chart)</h5>
<div class="table-wrap">
<table id="alerts-table" aria-labelledby="alerts-h">
<thead><tr><th scope="col">At</th><th scope="col">Alert</th><th scope="col">Keyword</th><th scope="col">Domain</th><th scope="col">From</th><th scope="col">To</th></tr></thead>
<tbody></tbody>
</table>
</div>
<h5 id="visibility-h">Visibility, last 30 days (UTC days, newest first)</h5>
<div class="table-wrap">
<table id="visibility-table" aria-labelledby="visibility-h">
<thead><tr><th scope="col">Day</th><th scope="col">Domain</th><th scope="col">Keywords</th><th scope="col">Average position</th><th scope="col">Ranked</th><th scope="col">Top 3</th><th scope="col">Top 10</th><th scope="col">Top 100</th><th scope="col">Share of voice</th><th scope="col">AI Overview citations</th><th scope="col">Above the fold (keywords)</th></tr></thead>
<tbody></tbody>
</table>
</div>
<h5 id="changes-h">Latest changes (newest first)</h5>
<div class="table-wrap">
<table id="changes-table" aria-labelledby="changes-h">
<thead><tr><th scope="col">At</th><th scope="col">Keyword</th><th scope="col">Domain</th><th scope="col">Change</th><th scope="col">From</th><th scope="col">To</th><th scope="col">URL now</th></tr></thead>
<tbody></tbody>
</table>
</div>
</section>
</section>
</section>
<section id="service" aria-labelledby="service-h">
<h2 id="service-h">Service</h2>
<dl class="stats">
<div><dt>Cache hit rate (24 h)</dt><dd id="cache-rate">–</dd></div>
<div><dt>Queue depth (all lanes)</dt><dd id="queue-depth">–</dd></div>
<div><dt>Oldest waiting</dt><dd id="queue-age">–</dd></div>
<div><dt>Projection lag</dt><dd id="projection-lag">–</dd></div>
<div><dt>Webhook outbox</dt><dd id="outbox-depth">–</dd></div>
<div><dt>Oldest delivery waiting</dt><dd id="outbox-age">–</dd></div>
</dl>
<h3>Jobs per hour by outcome, last 24 hours</h3>
<figure id="hours-chart" class="chart"></figure>
<div class="table-wrap">
<table id="hours-table">
<caption class="sr-only">Jobs per hour by outcome</caption>
<thead><tr><th scope="col">Hour (UTC)</th><th scope="col">Submitted</th><th scope="col">From cache</th><th scope="col">Done</th><th scope="col">Partial</th><th scope="col">Failed (by kind)</th></tr></thead>
<tbody></tbody>
</table>
</div>
<h3 id="lanes-h">Queue by lane</h3>
<div class="table-wrap">
<table id="lanes-table" aria-labelledby="lanes-h">
<thead><tr><th scope="col">Lane</th><th scope="col">Waiting</th><th scope="col">Pages waiting</th><th scope="col">Crawling</th><th scope="col">Keys with jobs not yet done, most pages waiting first</th></tr></thead>
<tbody></tbody>
</table>
</div>
<h3 id="demand-h">Demand against capacity, pages per hour (log scale)</h3>
<p id="capacity-note">–</p>
<figure id="demand-chart" class="chart"></figure>
<h3 id="routes-h">Routes (proxies) of the running fleet, last hour</h3>
<div class="table-wrap">
<table id="routes-table" aria-labelledby="routes-h">
<thead><tr><th scope="col">Route</th><th scope="col">Rate (requests/min)</th><th scope="col">Requests</th><th scope="col">Blocks</th><th scope="col">Placed elsewhere</th><th scope="col">Cooling until (UTC)</th></tr></thead>
<tbody></tbody>
</table>
</div>
</section>
<dialog id="confirm" aria-labelledby="confirm-h">
<form method="dialog">
<h3 id="confirm-h">Revoke key?</h3>
<p id="confirm-text"></p>
<div class="row"><button value="cancel" class="secondary" autofocus>Cancel</button><button value="revoke" class="danger">Revoke</button></div>
</form>
</dialog>
</main>
<script type="module" src="/admin/assets/dashboard.js"></script>`,
    csrf,
  );

const htmlResponse = (description: string) => ({ description, content: { 'text/html': { schema: z.string() } } });

/**
 * The admin dashboard's pages (`/admin`): a sign-in form that trades the admin token for a signed HttpOnly,
 * SameSite=Strict cookie, the dashboard shell, and its static files (no build step). Every write — signing in,
 * signing out, and the dashboard's calls to /admin/api — carries a CSRF token (@fastify/csrf-protection).
 */
export interface UiOptions {
  adminToken: string;
  csrfProtection: unknown;
  hasSession: SessionCheck;
  sessions: AdminSessionCommands;
  authFailures: AuthFailureGate;
  projected(position: number): Promise<void>;
}

export const uiRoutes: FastifyPluginAsync<UiOptions> = async (app, opts) => {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const dir = assetDir();
  const assets = new Map(
    (Object.keys(ASSETS) as AssetName[]).map((name) => {
      const body = readFileSync(new URL(name, dir));
      return [name, { body, etag: `"${createHash('sha1').update(body).digest('base64url')}"` }] as const;
    }),
  );
  const html = (reply: FastifyReply, status: number, body: string) =>
    reply
      .code(status)
      .type('text/html; charset=utf-8')
      .header('content-security-policy', DASHBOARD_CSP)
      .header('cache-control', 'no-store')
      .header('referrer-policy', 'no-referrer')
      .send(body);
  const ui = { tags: ['admin'], security: [] };
  const seeOther = (reply: FastifyReply) => reply.code(303).header('location', '/admin').send();

  r.get('/admin', {
    schema: {
      ...ui,
      operationId: 'adminDashboard',
      summary: 'The admin dashboard (signed in by cookie), or its sign-in form',
      response: { 200: htmlResponse('the dashboard, or the sign-in form when not signed in') },
    },
    handler: async (req, reply) => {
      const csrf = reply.generateCsrf();
      return html(reply, 200, (await opts.hasSession(req)) ? dashboardPage(csrf) : signInPage(csrf));
    },
  });

  r.post('/admin/session', {
    schema: {
      ...ui,
      operationId: 'adminSignIn',
      summary: 'Sign in to the dashboard with the admin token (form post); sets the session cookie',
      body: z.object({ token: z.string().max(512), _csrf: z.string().max(512).optional() }),
      response: {
        303: z.null().describe('signed in: the session cookie is set, go to /admin'),
        401: htmlResponse('wrong token: the sign-in form again, with the error'),
        403: ErrorBody.describe('the form token (CSRF) is missing or stale: reload /admin'),
        415: ErrorBody,
        422: ErrorBody,
      },
    },
    preHandler: opts.csrfProtection as never,
    handler: async (req, reply) => {
      opts.authFailures.check(req);
      if (!tokenMatches(opts.adminToken, req.body.token)) {
        await opts.authFailures.failed(req);
        return html(reply, 401, signInPage(reply.generateCsrf(), 'That is not the admin token.'));
      }
      // the session is in the log (and projected here) before its cookie is handed out
      const { sessionId, position } = await opts.sessions.start(SESSION_MS, { correlationId: req.id });
      if (position !== undefined) await opts.projected(position);
      setSessionCookie(reply, sessionId);
      return seeOther(reply);
    },
  });

  r.post('/admin/session/end', {
    schema: {
      ...ui,
      operationId: 'adminSignOut',
      summary: 'Sign out of the dashboard (form post); clears the session cookie',
      body: z.object({ _csrf: z.string().max(512).optional() }).optional(),
      response: {
        303: z.null().describe('signed out: go to /admin'),
        403: ErrorBody.describe('the form token (CSRF) is missing or stale: reload /admin'),
        415: ErrorBody,
      },
    },
    preHandler: opts.csrfProtection as never,
    handler: async (req, reply) => {
      // ended in the log, not only in this browser: the cookie, copied or replayed, is refused from now on
      const sessionId = sessionIdOf(req);
      if (sessionId) {
        const { position } = await opts.sessions.end(sessionId, { correlationId: req.id });
        if (position !== undefined) await opts.projected(position);
      }
      clearSessionCookies(reply);
      return seeOther(reply);
    },
  });

  r.get('/admin/assets/:name', {
    schema: {
      ...ui,
      operationId: 'adminAsset',
      summary: "The dashboard's scripts and style sheet",
      params: z.object({ name: z.enum(Object.keys(ASSETS) as [AssetName, ...AssetName[]]) }),
      response: {
        200: {
          description: 'the file',
          content: { 'text/javascript': { schema: z.string() }, 'text/css': { schema: z.string() } },
        },
        304: z.null().describe('not modified'),
        422: ErrorBody,
      },
    },
    handler: async (req, reply) => {
      const name = req.params.name;
      const asset = assets.get(name)!;
      reply.header('etag', asset.etag).header('cache-control', 'no-cache');
      const raw = reply as FastifyReply;
      if (req.headers['if-none-match'] === asset.etag) return raw.code(304).send();
      return raw.type(ASSETS[name]).send(asset.body);
    },
  });
};
