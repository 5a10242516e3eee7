import { createHash, randomBytes } from 'node:crypto';

/**
 * What live Google does to crawlers, for the offline fake Google (docs/adversary.md): a JavaScript challenge only a
 * browser passes, a per-address rate limit that sends bursts to /sorry/ with a ban that doubles while the address keeps
 * asking, the EU consent interstitial, and the occasional 5xx or hang. Each behaviour is on by being configured.
 * The fake Google (fakeGoogle.ts) asks `judge` about every request to `/`, `/search` and `/sorry/…`.
 */
export interface AdversaryOptions {
  /**
   * `/` and `/search` without a valid `GSG` cookie get a challenge page whose script computes the token with Web
   * Crypto (SHA-256 over a server nonce and the browser's user agent), sets it as a cookie and reloads. The server
   * verifies it; it is bound to the address and user agent that earned it and expires after `requestsPerToken`
   * requests or `tokenTtlMs`.
   */
  challenge?: { requestsPerToken?: number; tokenTtlMs?: number };
  /**
   * More than `perWindow` requests to `/` and `/search` from one address within `windowMs` (default one minute) send
   * it to `/sorry/` (a 302 to the CAPTCHA page, which answers 429) for `banMs` (default 60 s); each request made
   * while banned doubles the ban from that moment, up to `maxBanMs` (default one hour).
   */
  rateLimit?: { perWindow: number; windowMs?: number; banMs?: number; maxBanMs?: number };
  /** `/search` with `gl` in the EU (and EEA, UK, CH) and no `SOCS` or `CONSENT=YES` cookie gets the consent page */
  consent?: boolean;
  /** a share of `/search` requests answered 500/503 (`errorRate`) or never answered (`hangRate`); seeded */
  flaky?: { errorRate?: number; hangRate?: number; seed?: number };
  now?: () => number;
}

export type Verdict =
  | { kind: 'pass' }
  /** banned: a 302 to /sorry/index (for `/` and `/search`), or the 429 CAPTCHA page (for /sorry/ itself) */
  | { kind: 'sorry' }
  | { kind: 'challenge'; page: string }
  | { kind: 'consent' }
  | { kind: 'error'; status: 500 | 503 }
  | { kind: 'hang' };

export interface AddressStats {
  /** requests to `/`, `/search` and `/sorry/…` */
  requests: number;
  /** of those, the ones that arrived while the address was banned */
  whileBanned: number;
  bans: number;
  /** challenge pages served, and tokens earned by passing one */
  challenges: number;
  tokens: number;
  /** requests that carried a valid token */
  withToken: number;
  consents: number;
  errors: number;
  hangs: number;
  /** results and home pages served */
  served: number;
}

export interface AdversaryStats extends AddressStats {
  byAddress: Record<string, AddressStats>;
  /** when the first and the last request to `/` or `/search` came (ms since the epoch), from any address */
  firstAt?: number;
  lastAt?: number;
}

export interface AdversaryRequest {
  /** the source address (a forward proxy's, 127.0.0.2, …) */
  address: string;
  path: string;
  query: URLSearchParams;
  cookie: string;
  userAgent: string;
}

export interface Adversary {
  judge(request: AdversaryRequest): Verdict;
  stats(): AdversaryStats;
}

/** Google's consent interstitial is shown in the EEA, the UK and Switzerland. */
const CONSENT_COUNTRIES = new Set(
  'at be bg hr cy cz dk ee fi fr de gr hu ie it lv lt lu mt nl pl pt ro sk si es se is li no gb uk ch'.split(' '),
);

const zero = (): AddressStats => ({
  requests: 0,
  whileBanned: 0,
  bans: 0,
  challenges: 0,
  tokens: 0,
  withToken: 0,
  consents: 0,
  errors: 0,
  hangs: 0,
  served: 0,
});

/** mulberry32: a small seeded generator, so a flaky run is the same run twice (and the soak's schedule, test/soak/) */
export const seeded = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
  return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
};

const cookieValue = (header: string, name: string): string | undefined => {
  for (const part of header.split(/;\s*/)) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
};

export const tokenFor = (nonce: string, userAgent: string) =>
  createHash('sha256').update(`${nonce}|${userAgent}`).digest('hex');

/**
 * The challenge's script: what runs in the browser. It needs a JavaScript engine with Web Crypto and a cookie jar
 * that the next request carries; a client that only fetches HTML never sends the token.
 */
const challengeScript = (nonce: string) =>
  `<script>(function(){var n=${JSON.stringify(nonce)};` +
  'crypto.subtle.digest("SHA-256",new TextEncoder().encode(n+"|"+navigator.userAgent)).then(function(b){' +
  'var h=Array.prototype.map.call(new Uint8Array(b),function(x){return ("0"+x.toString(16)).slice(-2)}).join("");' +
  'document.cookie="GSG="+n+"."+h+"; path=/";location.reload();});})();</script>';

/**
 * `shell`: a real challenge page (its noscript refresh to /httpservice/retry/enablejs is what the parser knows it
 * by), whose own scripts are replaced by the one above.
 */
export const createAdversary = (options: AdversaryOptions, shell: () => string): Adversary => {
  const now = options.now ?? Date.now;
  const random = seeded(options.flaky?.seed ?? 1);
  const limit = options.rateLimit;
  const windowMs = limit?.windowMs ?? 60_000;
  const banBase = limit?.banMs ?? 60_000;
  const banMax = limit?.maxBanMs ?? 3_600_000;
  const perToken = options.challenge?.requestsPerToken ?? 50;
  const tokenTtl = options.challenge?.tokenTtlMs ?? 600_000;

  const byAddress = new Map<string, AddressStats>();
  const limits = new Map<string, { hits: number[]; bannedUntil: number; banMs: number }>();
  const nonces = new Map<string, { address: string; at: number }>();
  const tokens = new Map<string, { address: string; userAgent: string; at: number; uses: number }>();
  let strippedShell: string | undefined;
  let firstAt: number | undefined;
  let lastAt: number | undefined;

  const statsOf = (address: string) => {
    let s = byAddress.get(address);
    if (!s) {
      s = zero();
      byAddress.set(address, s);
    }
    return s;
  };

  /** the limiter's answer for a request at `t`: banned before it, banned by it, or let through */
  const limited = (address: string, t: number, counts: boolean): 'banned' | 'tripped' | 'ok' => {
    if (!limit) return 'ok';
    let l = limits.get(address);
    if (!l) {
      l = { hits: [], bannedUntil: 0, banMs: 0 };
      limits.set(address, l);
    }
    if (t < l.bannedUntil) {
      if (counts) {
        l.banMs = Math.min(banMax, l.banMs * 2);
        l.bannedUntil = t + l.banMs;
      }
      return 'banned';
    }
    if (!counts) return 'ok';
    l.hits.push(t);
    while (l.hits.length && l.hits[0]! <= t - windowMs) l.hits.shift();
    if (l.hits.length <= limit.perWindow) return 'ok';
    l.hits = [];
    l.banMs = banBase;
    l.bannedUntil = t + banBase;
    return 'tripped';
  };

  const challengePage = (address: string, t: number) => {
    const nonce = randomBytes(12).toString('hex');
    nonces.set(nonce, { address, at: t });
    // nonces nobody answered within the token's life are forgotten (bounded memory for a long-running fake)
    for (const [n, v] of nonces) {
      if (v.at > t - tokenTtl && nonces.size <= 10_000) break;
      nonces.delete(n);
    }
    strippedShell ??= shell().replace(/<script\b[\s\S]*?<\/script>/gi, '');
    return strippedShell.replace('</body>', `${challengeScript(nonce)}</body>`);
  };

  /** a valid token spends one use; a fresh answer to a challenge becomes a token */
  const tokenValid = (r: AdversaryRequest, t: number, s: AddressStats): boolean => {
    const value = cookieValue(r.cookie, 'GSG');
    if (!value) return false;
    const held = tokens.get(value);
    if (held) {
      const fresh = held.uses < perToken && t - held.at < tokenTtl;
      if (!fresh || held.address !== r.address || held.userAgent !== r.userAgent) {
        if (!fresh) tokens.delete(value);
        return false;
      }
      held.uses += 1;
      return true;
    }
    const [nonce = '', hex = ''] = value.split('.');
    const issued = nonces.get(nonce);
    if (!issued || issued.address !== r.address || tokenFor(nonce, r.userAgent) !== hex) return false;
    nonces.delete(nonce);
    tokens.set(value, { address: r.address, userAgent: r.userAgent, at: t, uses: 1 });
    s.tokens += 1;
    return true;
  };

  return {
    judge(r) {
      const t = now();
      const s = statsOf(r.address);
      s.requests += 1;
      const asking = r.path === '/' || r.path === '/search';
      if (asking) {
        firstAt ??= t;
        lastAt = t;
      }
      const verdict = limited(r.address, t, asking);
      if (verdict === 'banned') s.whileBanned += 1;
      if (verdict === 'tripped') s.bans += 1;
      if (verdict !== 'ok') return { kind: 'sorry' };
      if (!asking) return { kind: 'pass' };
      if (options.challenge) {
        if (tokenValid(r, t, s)) s.withToken += 1;
        else {
          s.challenges += 1;
          return { kind: 'challenge', page: challengePage(r.address, t) };
        }
      }
      if (r.path === '/search') {
        const gl = (r.query.get('gl') ?? '').toLowerCase();
        const consented =
          cookieValue(r.cookie, 'SOCS') !== undefined || /^YES/.test(cookieValue(r.cookie, 'CONSENT') ?? '');
        if (options.consent && CONSENT_COUNTRIES.has(gl) && !consented) {
          s.consents += 1;
          return { kind: 'consent' };
        }
        const roll = options.flaky ? random() : 1;
        const errorRate = options.flaky?.errorRate ?? 0;
        if (roll < errorRate) {
          s.errors += 1;
          return { kind: 'error', status: roll < errorRate / 2 ? 500 : 503 };
        }
        if (roll < errorRate + (options.flaky?.hangRate ?? 0)) {
          s.hangs += 1;
          return { kind: 'hang' };
        }
      }
      s.served += 1;
      return { kind: 'pass' };
    },
    stats() {
      const total = zero();
      const all: Record<string, AddressStats> = {};
      for (const [address, s] of byAddress) {
        all[address] = { ...s };
        for (const k of Object.keys(total) as (keyof AddressStats)[]) total[k] += s[k];
      }
      return { ...total, byAddress: all, ...(firstAt !== undefined ? { firstAt, lastAt } : {}) };
    },
  };
};
