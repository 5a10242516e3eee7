import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createGzip, gzipSync } from 'node:zlib';
import { parse as parseHtml } from 'node-html-parser';
import { decodeUule } from '../../services/geo/uule.js';
import { type Adversary, type AdversaryOptions, type AdversaryStats, createAdversary } from './adversary.js';
import { readFixtureText } from './fixtures.js';

/**
 * A local "Google" on 127.0.0.1 for crawler tests (docs/style.md#tests): real fixture pages by query and `start`,
 * plus latency, failures and the real block pages on demand. Tests never reach the internet.
 */

/** Ten real desktop SERPs (94 organic results between them); `start=0,10,…,90` each get a different one. */
export const DEFAULT_PAGES: readonly string[] = [
  'serp/websearcher/2024-03-13_cistern_81f344a9684a.html.gz',
  'serp/websearcher/2024-03-13_define-judgement_4f4d0fed0592.html.gz',
  'serp/websearcher/2024-03-13_biscuit-and-gravy-recipe_b938dae25618.html.gz',
  'serp/websearcher/2024-03-13_file-folder_f10d116b26c6.html.gz',
  'serp/websearcher/2024-03-13_gu-gels_0410241ce1e2.html.gz',
  'serp/websearcher/2024-03-13_koch-hiring-mississippi_6dc5bc34ff55.html.gz',
  'serp/websearcher/2024-03-13_prouve_334a0bfcce0b.html.gz',
  'serp/websearcher/2024-03-13_red-skin-peanuts_ee36775407d7.html.gz',
  'serp/websearcher/2025-02-06_barclays-job-cuts_ad1eb5594673.html.gz',
  'serp/websearcher/2025-02-06_my-work-is-done-why-wait_86cc98fe45fc.html.gz',
];

/**
 * Every query gets one result page and knows it is the last (a 2025 page whose pager loses its "Next" link): a search
 * is one Google request, for the fleet's tests and benchmark (docs/fleet.md).
 */
export const ONE_PAGE = {
  pages: [DEFAULT_PAGES[8]!],
  transform: (_path: string, html: string) => html.replace(/\bid="?pnnext"?/g, ''),
} as const;

/** Served past the end of a page list: Google's real "did not match any documents" page. */
export const NO_RESULTS_PAGE = 'serp/serp-parser-zlurad/desktop/no-results.html.gz';
export const CAPTCHA_PAGE = 'serp/websearcher/fixtures-head/sorry_index.html.gz';
export const JS_CHALLENGE_PAGE = 'serp/js-challenge-pages/asammad48-LeadsDiscoveryAgent_2025-12-20_en.html.gz';
export const CONSENT_PAGE = 'serp/kokoc-google-parser/2022-03-31.html.gz';
/** A 2026 page whose AI Overview the fake removes and re-inserts by script after a delay. */
export const AIO_PAGE = 'serp/websearcher/2026-01-20_why-is-the-sky-blue_7049404a2dd6.html.gz';
/** Query that gets the delayed-AI-Overview page. */
export const AIO_QUERY = 'why is the sky blue?';

export type Trouble =
  | { kind: 'status'; status: 429 | 500 | 503 }
  /** the real CAPTCHA page served in place of results (200, as some proxies pass it on) */
  | { kind: 'captcha' }
  /** what google.com does: 302 to /sorry/index, which answers 429 with the CAPTCHA page */
  | { kind: 'sorry_redirect' }
  | { kind: 'js_challenge' }
  | { kind: 'consent' }
  /** never answers, so the client's timeout fires */
  | { kind: 'hang' }
  /** the page's headers and part of its body, then the connection reset (a proxy or Google dropping it mid-body) */
  | { kind: 'reset' }
  /** the page sent a few bytes at a time, slower than any page deadline: `forMs` (default 40 s) and then cut */
  | { kind: 'trickle'; forMs?: number }
  /** a 200 whose HTML stops part way (a body cut short, its closing tags never sent) */
  | { kind: 'truncated' }
  /** a 200 whose body is not a page: stray bytes, unclosed and unbalanced tags */
  | { kind: 'malformed' }
  /** a 200 page larger than any result page the crawler reads (default 9 MB, past the 8 MB cap) */
  | { kind: 'oversized'; mb?: number }
  /** a small gzip body (`content-encoding: gzip`) that inflates to `inflatedMb` (default 256 MB) of nothing */
  | { kind: 'gzip_bomb'; inflatedMb?: number }
  /** a 302 to a page that redirects again, forever */
  | { kind: 'redirect_loop' };

/** the troubles the soak (test/soak/) and the tests can ask for, by kind */
export type TroubleKind = Trouble['kind'];

export interface FakeGoogleMode {
  /** added before every /search answer; a function gives each page its own (out-of-order arrival) */
  latencyMs?: number | ((start: number, q: string) => number);
  trouble?: Trouble;
  /** trouble only for pages with `start >= fromStart` (default 0: every page) */
  fromStart?: number;
  /** trouble only for the first K /search requests after this mode was set (default: all of them) */
  firstRequests?: number;
  /**
   * trouble for this share (0–1) of the /search requests it would apply to, spread evenly from the first (0.25: the
   * 1st, 5th, 9th, …), so the rest are answered and a retry can pass (default 1: all of them)
   */
  share?: number;
  /**
   * trouble only for requests with this exact `q` (default: any): a late request of an earlier test's crawl (a page
   * aborted in flight) then neither meets the trouble nor uses up `firstRequests`
   */
  query?: string;
  /** /search without an NID cookie gets the JS challenge, as google.com does with clients that run no JavaScript */
  requireCookie?: boolean;
}

/**
 * Where the fake says it placed each search (docs/locations.md#offline-the-fake-google-plays-along): the line at the
 * foot of every result page names the request's `uule` place, as Google does when it honours one, except on requests
 * from an address with a home city, where the home wins over the uule for a share of them (a proxy whose own address
 * Google trusts more). Requests without a uule and without a home keep the fixture page's own line.
 */
export interface FakePlacement {
  /**
   * by source address (the proxies of test/support/proxies.ts reach the fake from 127.0.0.2, 127.0.0.3, …): the
   * proxy's home city as the line writes it ("Chicago, Illinois") and the share of its searches placed there (0–1,
   * spread evenly from the first: 0.5 is the 1st, 3rd, 5th, …)
   */
  homes?: Record<string, { name: string; share: number }>;
}

export interface FakeGoogleOptions extends FakeGoogleMode {
  /** fixture paths (relative to the fixtures folder) for start=0,10,… (default DEFAULT_PAGES) */
  pages?: readonly string[];
  /** per-query page lists, by the exact `q` */
  queries?: Record<string, readonly string[]>;
  /**
   * each new search of a query (a request with start=0) gets the page list turned by one more page, so positions move
   * between searches as they do on Google (rank tracking): search n of a query serves page list[(k + n) % length] for
   * start=10k. The query's later pages follow the count of its start=0 requests so far.
   */
  rotate?: boolean;
  /** rewrites a fixture page before it is served (e.g. drop the "Next" link to make a last page) */
  transform?: (path: string, html: string) => string;
  /** how long after load the AI Overview script inserts the block (default 1500 ms) */
  aioDelayMs?: number;
  /**
   * what live Google does to crawlers (adversary.ts, docs/adversary.md): the JavaScript challenge, the per-address
   * rate limit and /sorry/ bans, the EU consent page, 5xx and hangs; off unless given
   */
  adversary?: AdversaryOptions;
  /**
   * where the location line says each search was placed (default `{}`: the uule's place); false serves the fixture
   * pages' own lines untouched
   */
  placement?: FakePlacement | false;
  /** where to listen (default 127.0.0.1 and a free port) */
  port?: number;
  host?: string;
}

export interface RecordedRequest {
  path: string;
  /** the client's address: a forward proxy's (127.0.0.2, …) or the caller's own */
  address?: string;
  query: Record<string, string>;
  headers: Record<string, string | string[] | undefined>;
  /** the client closed the connection before the answer was sent (a page the crawler no longer needed) */
  aborted?: boolean;
  /** where the page's location line placed it: the uule's place, or the address's home city */
  placed?: { at: 'uule' | 'home'; name: string };
  /** the trouble answered in place of the page (setMode's), when one was */
  trouble?: TroubleKind;
  /** when it arrived (ms since the epoch) */
  at?: number;
}

export interface FakeGoogle {
  origin: string;
  requests: RecordedRequest[];
  /** replaces the whole mode (latency, trouble, scope) and restarts the firstRequests count */
  setMode(mode: FakeGoogleMode): void;
  /** replaces where searches are placed (homes and their shares start counting again) */
  setPlacement(placement: FakePlacement | false): void;
  /** only the /search requests, in arrival order */
  searches(): RecordedRequest[];
  /** what the adversary counted (also served as JSON at `/__fake/adversary`); undefined without one */
  adversary(): AdversaryStats | undefined;
  close(): Promise<void>;
}

const cache = new Map<string, string>();
const fixture = (path: string): string => {
  let text = cache.get(path);
  if (text === undefined) {
    text = readFixtureText(path);
    cache.set(path, text);
  }
  return text;
};

/** Every AI Overview marker of the 2024–26 layouts (containers, bodies, headings). */
const AIO_MARKERS = 'div.YzCcne, div.mZJni, div.rPeykc, div.Fzsovc, [data-mcpr], li.LLtSOc';

/**
 * The AIO page without its scripts (they would call home) and with every piece of its AI Overview taken out and put
 * back by one script `delayMs` after load, as Google streams it in. Each piece leaves an empty `.fake-aio-slot`.
 */
const buildAioPage = (delayMs: number): string => {
  const root = parseHtml(fixture(AIO_PAGE), { comment: false });
  for (const s of root.querySelectorAll('script')) s.remove();
  const found = root.querySelectorAll(AIO_MARKERS);
  const inSet = new Set(found);
  const outermost = found.filter((el) => {
    for (let a = el.parentNode; a; a = a.parentNode) if (inSet.has(a)) return false;
    return true;
  });
  if (outermost.length === 0) throw new Error(`no AI Overview in ${AIO_PAGE}`);
  const blocks = outermost.map((el, i) => {
    const html = el.outerHTML;
    el.replaceWith(`<div class="fake-aio-slot" data-i="${i}"></div>`);
    return html;
  });
  const data = JSON.stringify(blocks).replace(/</g, '\\u003c');
  const script = `<script>addEventListener('load',function(){setTimeout(function(){var b=${data};document.querySelectorAll('.fake-aio-slot').forEach(function(s){s.outerHTML=b[Number(s.getAttribute('data-i'))];});},${delayMs});});</script>`;
  return root.toString().replace('</body>', `${script}</body>`);
};

/** "Austin,Texas,United States" as Google's line writes it: "Austin, Texas" (a country alone: its name). */
export const lineName = (canonical: string): string => {
  const parts = canonical.split(',').map((p) => p.trim());
  return (parts.length > 1 ? parts.slice(0, -1) : parts).join(', ');
};

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * The page with its own location lines put out of reach (their markers renamed: the dot's class, the 2021 settings'
 * `uul_text`, the basic page's help link) and one line of the desktop markup before `</body>` naming `name`, "From
 * your IP address" as Google writes a uule's place too (docs/locations.md#where-google-placed-a-search).
 */
const withLocationLine = (html: string, name: string): string => {
  const line = `<div id="fake-location" class="fbar"><a href="#"><div><span class="EYqSq unknown_loc"></span><span class="dfB0uf">${escapeHtml(name)}</span></div><div><span>&nbsp;-&nbsp;</span><span class="KwU3F"><span>From your IP address</span></span></div></a> - <update-location>Update location</update-location></div>`;
  const stripped = html
    .replace(/\b(?:un)?known_loc\b/g, 'fake_loc_gone')
    .replace(/uul_text/g, 'fake_uul_gone')
    .replace(/ws_settings_location/g, 'fake_help_gone');
  const end = stripped.lastIndexOf('</body>');
  return end < 0 ? stripped + line : `${stripped.slice(0, end)}${line}${stripped.slice(end)}`;
};

/** not a page: stray bytes, a NUL, unbalanced and unclosed tags (what a broken proxy or a bad gateway passes on) */
const MALFORMED =
  '\u0000\u001f\u008b<html><head><title>Google</tit<body><div id="search"><div class="g"><a href=><h3><<<>>>' +
  '</span></table>\ufffd\ufffd<script>var x = "</div><div id="rso">'.repeat(64);

const oversizedPages = new Map<number, string>();
/** a real page padded with a comment to `mb` MB: larger than any result page (built once per size) */
const oversized = (mb: number): string => {
  let page = oversizedPages.get(mb);
  if (page === undefined) {
    const html = fixture(DEFAULT_PAGES[0]!);
    const pad = Math.max(0, mb * 2 ** 20 - html.length);
    page = html.replace('</body>', `<!--${'x'.repeat(pad)}--></body>`);
    oversizedPages.set(mb, page);
  }
  return page;
};

const bombs = new Map<number, Buffer>();
/** `inflatedMb` MB of spaces, gzipped at the best ratio (256 MB is about 250 kB): built once per size */
const gzipBomb = (inflatedMb: number): Buffer => {
  let bomb = bombs.get(inflatedMb);
  if (!bomb) {
    const mb = Buffer.alloc(2 ** 20, 0x20);
    const chunks = Array.from({ length: inflatedMb }, () => mb);
    bomb = gzipSync(Buffer.concat(chunks), { level: 9 });
    bombs.set(inflatedMb, bomb);
  }
  return bomb;
};

/**
 * Builds the large bodies of `troubles` ahead of time (a 256 MB bomb is gzipped a megabyte at a time, off the event
 * loop's critical path), so the first request that meets one is answered at once, as the rest are.
 */
export const prepareTroubles = async (troubles: readonly Trouble[]): Promise<void> => {
  for (const trouble of troubles) {
    if (trouble.kind === 'oversized') oversized(trouble.mb ?? 9);
    if (trouble.kind !== 'gzip_bomb') continue;
    const size = trouble.inflatedMb ?? 256;
    if (bombs.has(size)) continue;
    const gzip = createGzip({ level: 9 });
    const out: Buffer[] = [];
    gzip.on('data', (c: Buffer) => out.push(c));
    const done = new Promise<void>((resolve, reject) => {
      gzip.on('end', resolve);
      gzip.on('error', reject);
    });
    const mb = Buffer.alloc(2 ** 20, 0x20);
    for (let i = 0; i < size; i++) {
      if (!gzip.write(mb)) await new Promise((r) => gzip.once('drain', r));
    }
    gzip.end();
    await done;
    bombs.set(size, Buffer.concat(out));
  }
};

const cookieHas = (req: IncomingMessage, name: string) =>
  (req.headers.cookie ?? '').split(/;\s*/).some((c) => c.startsWith(`${name}=`));

export const startFakeGoogle = async (options: FakeGoogleOptions = {}): Promise<FakeGoogle> => {
  const pages = options.pages ?? DEFAULT_PAGES;
  const requests: RecordedRequest[] = [];
  let mode: FakeGoogleMode = { ...options };
  let troubleCount = 0;
  /** requests the mode's trouble could apply to since it was set, for `share` */
  let eligibleCount = 0;
  let aioPage: string | undefined;
  const hanging = new Set<ServerResponse>();
  /** per query: how many searches (start=0 requests) it has had, for `rotate` */
  const searchesOf = new Map<string, number>();
  let placement: FakePlacement | false = options.placement ?? {};
  const recordOf = new WeakMap<IncomingMessage, RecordedRequest>();
  /** per address with a home: its /search requests so far, to spread the home's share evenly */
  const homeCount = new Map<string, number>();

  /** where this request is placed, or undefined to keep the page's own line */
  const placeOf = (req: IncomingMessage, url: URL): RecordedRequest['placed'] => {
    if (!placement) return undefined;
    const address = (req.socket.remoteAddress ?? '').replace(/^::ffff:/, '');
    const home = placement.homes?.[address];
    if (home) {
      const n = homeCount.get(address) ?? 0;
      homeCount.set(address, n + 1);
      if (Math.ceil((n + 1) * home.share) > Math.ceil(n * home.share)) return { at: 'home', name: home.name };
    }
    const uule = url.searchParams.get('uule');
    const decoded = uule ? decodeUule(uule) : undefined;
    return decoded?.form === 'name' ? { at: 'uule', name: lineName(decoded.name) } : undefined;
  };

  /** the page with its location line as placed (recorded on the request) */
  const placed = (req: IncomingMessage, url: URL, html: string): string => {
    const at = placeOf(req, url);
    if (!at) return html;
    const recorded = recordOf.get(req);
    if (recorded) recorded.placed = at;
    return withLocationLine(html, at.name);
  };
  const adversary: Adversary | undefined = options.adversary
    ? createAdversary(options.adversary, () => fixture(JS_CHALLENGE_PAGE))
    : undefined;

  const send = (res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'text/html; charset=UTF-8', ...headers });
    res.end(body);
  };

  /** every visitor without one gets an NID cookie, so tests can tell sessions apart */
  const nidCookie = (req: IncomingMessage): Record<string, string> =>
    cookieHas(req, 'NID') ? {} : { 'set-cookie': `NID=${randomBytes(6).toString('hex')}; Path=/; HttpOnly` };

  const troubleApplies = (start: number, q: string): boolean => {
    if (mode.query !== undefined && q !== mode.query) return false;
    if (!mode.trouble || start < (mode.fromStart ?? 0)) return false;
    if (mode.share !== undefined && mode.share < 1) {
      // spread evenly, as a home's share is: the n-th eligible request is troubled when the share's count steps up
      const n = eligibleCount;
      eligibleCount += 1;
      if (Math.ceil((n + 1) * mode.share) <= Math.ceil(n * mode.share)) return false;
    }
    if (mode.firstRequests === undefined) return true;
    troubleCount += 1;
    return troubleCount <= mode.firstRequests;
  };

  const answerTrouble = (req: IncomingMessage, res: ServerResponse, trouble: Trouble, url: URL) => {
    const recorded = recordOf.get(req);
    if (recorded) recorded.trouble = trouble.kind;
    switch (trouble.kind) {
      case 'status':
        return send(res, trouble.status, `<html><body>error ${trouble.status}</body></html>`);
      case 'captcha':
        return send(res, 200, fixture(CAPTCHA_PAGE));
      case 'sorry_redirect':
        return send(res, 302, '', {
          location: `/sorry/index?continue=${encodeURIComponent(url.pathname + url.search)}&q=x`,
        });
      case 'js_challenge':
        return send(res, 200, fixture(JS_CHALLENGE_PAGE));
      case 'consent':
        return send(res, 200, fixture(CONSENT_PAGE));
      case 'hang':
        return hang(res);
      case 'reset': {
        const body = Buffer.from(fixture(pages[0]!));
        res.writeHead(200, { 'content-type': 'text/html; charset=UTF-8', 'content-length': String(body.length) });
        // a third of the page, then the socket goes as a reset would (the rest never comes)
        res.write(body.subarray(0, Math.floor(body.length / 3)), () => res.socket?.resetAndDestroy());
        return;
      }
      case 'trickle':
        return trickle(res, trouble.forMs ?? 40_000);
      case 'truncated': {
        const html = fixture(pages[0]!);
        return send(res, 200, html.slice(0, Math.floor(html.length * 0.4)));
      }
      case 'malformed':
        return send(res, 200, MALFORMED);
      case 'oversized':
        return send(res, 200, oversized(trouble.mb ?? 9));
      case 'gzip_bomb':
        res.writeHead(200, { 'content-type': 'text/html; charset=UTF-8', 'content-encoding': 'gzip' });
        res.end(gzipBomb(trouble.inflatedMb ?? 256));
        return;
      case 'redirect_loop':
        return send(res, 302, '', { location: '/__fake/loop/1' });
    }
  };

  /** headers, then one small piece of the page each second: alive, and never done before the client's deadline */
  const trickle = (res: ServerResponse, forMs: number) => {
    const body = Buffer.from(fixture(pages[0]!));
    res.writeHead(200, { 'content-type': 'text/html; charset=UTF-8', 'content-length': String(body.length) });
    hanging.add(res);
    let at = 0;
    const started = Date.now();
    const timer = setInterval(() => {
      if (Date.now() - started >= forMs || at >= body.length) {
        clearInterval(timer);
        res.destroy();
        return;
      }
      res.write(body.subarray(at, at + 64));
      at += 64;
    }, 1_000);
    res.on('close', () => {
      clearInterval(timer);
      hanging.delete(res);
    });
  };

  const answerSearch = (req: IncomingMessage, res: ServerResponse, url: URL) => {
    const q = url.searchParams.get('q') ?? '';
    const start = Number(url.searchParams.get('start') ?? '0') || 0;
    if (troubleApplies(start, q) && mode.trouble) return answerTrouble(req, res, mode.trouble, url);
    if (mode.requireCookie && !cookieHas(req, 'NID')) return send(res, 200, fixture(JS_CHALLENGE_PAGE));
    if (q === AIO_QUERY && !options.queries?.[q]) {
      aioPage ??= buildAioPage(options.aioDelayMs ?? 1500);
      return send(res, 200, placed(req, url, aioPage), nidCookie(req));
    }
    const list = options.queries?.[q] ?? pages;
    if (start === 0) searchesOf.set(q, (searchesOf.get(q) ?? 0) + 1);
    const turn = options.rotate ? Math.max(0, (searchesOf.get(q) ?? 1) - 1) : 0;
    const k = Math.floor(start / 10);
    const page = (k < list.length ? list[(k + turn) % list.length] : undefined) ?? NO_RESULTS_PAGE;
    const html = fixture(page);
    send(res, 200, placed(req, url, options.transform ? options.transform(page, html) : html), nidCookie(req));
  };

  const hang = (res: ServerResponse) => {
    hanging.add(res);
    res.on('close', () => hanging.delete(res));
  };

  /** the adversary's answer in place of the page, or false when it lets the request through */
  const adversaryAnswered = (req: IncomingMessage, res: ServerResponse, url: URL): boolean => {
    if (!adversary || !(url.pathname === '/' || url.pathname === '/search' || url.pathname.startsWith('/sorry/')))
      return false;
    const verdict = adversary.judge({
      address: req.socket.remoteAddress ?? '',
      path: url.pathname,
      query: url.searchParams,
      cookie: req.headers.cookie ?? '',
      userAgent: String(req.headers['user-agent'] ?? ''),
    });
    switch (verdict.kind) {
      case 'pass':
        return false;
      case 'sorry':
        if (url.pathname.startsWith('/sorry/')) return false;
        send(res, 302, '', {
          location: `/sorry/index?continue=${encodeURIComponent(url.pathname + url.search)}&q=x`,
        });
        return true;
      case 'challenge':
        send(res, 200, verdict.page);
        return true;
      case 'consent':
        send(res, 200, fixture(CONSENT_PAGE));
        return true;
      case 'error':
        send(res, verdict.status, `<html><body>error ${verdict.status}</body></html>`);
        return true;
      case 'hang':
        hang(res);
        return true;
    }
  };

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname === '/__fake/adversary') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(adversary?.stats() ?? null));
      return;
    }
    const recorded: RecordedRequest = {
      path: url.pathname,
      address: req.socket.remoteAddress,
      query: Object.fromEntries(url.searchParams),
      headers: { ...req.headers },
      at: Date.now(),
    };
    requests.push(recorded);
    recordOf.set(req, recorded);
    res.on('close', () => {
      if (!res.writableFinished) recorded.aborted = true;
    });
    // judged and answered as it arrives, as Google's limiter counts it
    if (adversaryAnswered(req, res, url)) return;
    if (url.pathname === '/search') {
      const latency =
        typeof mode.latencyMs === 'function'
          ? mode.latencyMs(Number(url.searchParams.get('start') ?? '0') || 0, url.searchParams.get('q') ?? '')
          : (mode.latencyMs ?? 0);
      if (latency > 0) setTimeout(() => answerSearch(req, res, url), latency);
      else answerSearch(req, res, url);
      return;
    }
    if (url.pathname === '/sorry/index') return send(res, 429, fixture(CAPTCHA_PAGE));
    // the redirect loop's pages: each sends the client one further, and none is ever a page
    const loop = /^\/__fake\/loop\/(\d+)$/.exec(url.pathname);
    if (loop) return send(res, 302, '', { location: `/__fake/loop/${Number(loop[1]) + 1}` });
    // the home page is where a browser session picks up its cookies
    if (url.pathname === '/')
      return send(res, 200, '<html><body><form action="/search"></form></body></html>', nidCookie(req));
    send(res, 404, '<html><body>not found</body></html>');
  };

  const server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    setMode(next) {
      mode = { ...next };
      troubleCount = 0;
      eligibleCount = 0;
    },
    setPlacement(next) {
      placement = next;
      homeCount.clear();
    },
    searches: () => requests.filter((r) => r.path === '/search'),
    adversary: () => adversary?.stats(),
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
};
