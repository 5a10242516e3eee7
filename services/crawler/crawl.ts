import type { CrawlCost, CrawlFailure, LocationCheck, PageFetched, TargetingUsed } from '../../contracts/events.js';
import type { JobMessage } from '../../contracts/jobMessage.js';
import type { OrganicResult, ParsedSerp } from '../../contracts/result.js';
import { depthOf, MAX_DEPTH, pagesFor, type SearchRequest } from '../../contracts/search.js';
import { mergePages } from '../../parser/index.js';
import type { Config } from '../config/config.js';
import type { LocationJudge } from '../geo/locationCheck.js';
import type { BlobWriter } from '../ports/blobStore.js';
import type { Fetcher } from '../ports/fetcher.js';
import type { PageParser } from '../ports/pageParser.js';
import { type CostMeter, createCostMeter } from './cost.js';
import { CrawlAbortedError, CrawlRequestError, describeError, failureOf } from './errors.js';
import { fetchPageWithRetries, type KeptPage, type PageLimits } from './fetchPage.js';
import { buildGoogleUrl, googleOrigin } from './googleUrl.js';
import { createPlacing, type Placing } from './placement.js';
import { inlineHashing, type RawHashing } from './rawHash.js';
import { createRawPacker, type PackedRaw, type RawPacker } from './rawPacker.js';
import type { RequestShare, SessionPool } from './sessions.js';
import type { ResolvedTargeting } from './targeting.js';

/** SERP_FETCHER: which fetcher serves which page. */
export type FetcherMode = 'http' | 'browser' | 'auto';

export interface CrawlLimits extends PageLimits {
  /** stop once this many organic results are in hand (default MAX_DEPTH: Google's top 100); a job's `depth` lowers it */
  targetResults: number;
  /** at most this many pages, `start = 0, 10, …` (default MAX_DEPTH's); a job's `depth` lowers it to ceil(depth / 10) */
  maxPages: number;
}

/**
 * The crawl's configuration: the origin it fetches instead of Google's (SERP_GOOGLE_ORIGIN: tests, mirrors), and the
 * pages of one job fetched at once after the first (SERP_PAGES_IN_FLIGHT; SERP_STOP_DOMAIN_PAGES_IN_FLIGHT with
 * `stop_domain`, so a rank check stops cheaply). Page 1 always goes alone: it says whether there is a page 2 and
 * carries the AI Overview. With SERP_FAIR_SHARE each page request waits in the session pool's fair queue under its
 * job's lane, key and share; without, they all wait in one line, first come first served.
 */
export type CrawlSettings = Pick<Config, 'googleOrigin' | 'pagesInFlight' | 'stopDomainPagesInFlight' | 'fairShare'>;

export interface CrawlerDeps {
  settings: CrawlSettings;
  fetchers: { http?: Fetcher; browser?: Fetcher };
  /** SERP_FETCHER (default `auto` when both fetchers are given, else the one given) */
  fetcherMode?: FetcherMode;
  sessions: SessionPool;
  /** location / lat-lon → gl, hl, uule; throws CrawlRequestError for an unknown location */
  resolveTargeting?: (request: SearchRequest) => ResolvedTargeting;
  limits?: Partial<CrawlLimits>;
  /** where fetched pages are parsed (default: on the event loop); closed with the crawler */
  parser?: PageParser;
  /** where the raw HTML's SHA-256 is computed (default: on the event loop); closed with the crawler */
  hashing?: RawHashing;
  /** judges where Google placed each page (docs/locations.md#the-check); without it nothing is checked or retried */
  judgeLocation?: LocationJudge;
}

export interface CrawlOutcome {
  status: 'done' | 'partial' | 'failed';
  /** the pages kept, in order; a block page is never among them */
  pages: PageFetched[];
  /** merged result with continuous positions; absent when failed */
  result?: ParsedSerp;
  /**
   * every kept page behind its `<!-- serp-page … -->` marker (docs/parser.md#how-it-reads-a-page), gzipped as the pages
   * came (unpackRaw reads it); absent when failed
   */
  raw?: PackedRaw;
  /** blocks met (CAPTCHA, JS challenge, consent, 429), each of which retired a session */
  blocks: number;
  /** why the crawl ended early (partial) or failed */
  reason?: string;
  /** the same, for machines: code and kind of the error that ended it */
  failure?: CrawlFailure;
  /** what was sent to Google: the resolved location, gl, hl, uule, domain, device; absent when failed */
  targeting?: TargetingUsed;
  /**
   * the crawl ended before its depth did: Google's last page, or `stop_domain` found. Its result is then what any
   * deeper crawl would get too, so the cache may answer deeper searches with it (docs/depth.md).
   */
  exhausted?: boolean;
  /** what the crawl cost in Google requests, and how the routes it used stood at its end (docs/fleet.md) */
  cost?: CrawlCost;
  /** when its first Google request went (ISO): the end of its wait in the queue; absent when it made none */
  firstRequestAt?: string;
  /** where Google placed the search against where it was asked to; absent without a judge, or when failed */
  locationCheck?: LocationCheck;
}

export interface CrawlOptions {
  /** called at least once per fetch attempt and back-off, so a queue lease never runs out during a long crawl */
  heartbeat: () => void;
  /** aborting stops the crawl: crawl() then rejects with CrawlAbortedError and no outcome is to be recorded */
  signal?: AbortSignal;
  /**
   * where the raw HTML goes page by page as the crawl takes each (the outcome's `raw` then has no `gzip`); the caller
   * commits or aborts it. Absent: the outcome carries the gzipped pages.
   */
  rawSink?: BlobWriter;
}

export interface Crawler {
  crawl(message: JobMessage, opts: CrawlOptions): Promise<CrawlOutcome>;
  close(): Promise<void>;
}

export const DEFAULT_LIMITS: CrawlLimits = {
  maxAttemptsPerPage: 4,
  pageTimeoutMs: 30_000,
  backoffBaseMs: 1_000,
  backoffMaxMs: 15_000,
  targetResults: MAX_DEPTH,
  maxPages: pagesFor(MAX_DEPTH),
};

type Settled = { ok: true; page: KeptPage } | { ok: false; err: unknown };

interface InFlight {
  settled: Promise<Settled>;
  abort: AbortController;
}

const hostOf = (link: string | undefined): string | undefined => {
  if (!link) return undefined;
  try {
    return new URL(link).hostname.toLowerCase();
  } catch {
    return undefined;
  }
};

/** `stop_domain: example.com` matches example.com and any subdomain (www.example.com, shop.example.com). */
const hasDomain = (results: readonly OrganicResult[], domain: string): boolean =>
  results.some((r) => {
    const host = hostOf(r.link);
    return host !== undefined && (host === domain || host.endsWith(`.${domain}`));
  });

/** the ranked results of a page: organic, or the articles of a news tab (tbm=nws) */
const rankedOn = (page: KeptPage) => {
  const news = page.serp.serp_features.news_results;
  return page.serp.organic_results.length + (Array.isArray(news) ? news.length : 0);
};

/**
 * The last page: no ranked results, or Google's pager is there without a "Next" link. Pages without a pager
 * (continuous scroll) say nothing, so the crawl goes on until the results run out or the page limit.
 */
const isLastPage = (page: KeptPage): boolean => {
  if (rankedOn(page) === 0) return true;
  // the parser's reading of the page links: numbered pages shown but no "next" (a#pnnext) means this is the last
  const nav = page.serp.serp_features.pagination as { next?: string } | undefined;
  return nav !== undefined && nav.next === undefined;
};

/** The targeting as sent: an explicit request gl / hl / uule wins over the location's, as in buildGoogleUrl. */
export const targetingUsed = (request: SearchRequest, resolved: ResolvedTargeting | undefined): TargetingUsed => {
  const gl = request.gl ?? resolved?.gl;
  const hl = request.hl ?? resolved?.hl;
  const uule = request.uule ?? resolved?.uule;
  return {
    ...(resolved?.location ? { location: resolved.location } : {}),
    ...(gl ? { gl } : {}),
    ...(hl ? { hl } : {}),
    ...(uule ? { uule } : {}),
    googleDomain: request.engine_domain ?? 'google.com',
    device: request.device,
  };
};

const trimOrganic = (serp: ParsedSerp, max: number): ParsedSerp =>
  serp.organic_results.length <= max ? serp : { ...serp, organic_results: serp.organic_results.slice(0, max) };

export const createCrawler = (deps: CrawlerDeps): Crawler => {
  const limits: CrawlLimits = { ...DEFAULT_LIMITS, ...deps.limits };
  const { http, browser } = deps.fetchers;
  const mode: FetcherMode = deps.fetcherMode ?? (http && browser ? 'auto' : browser ? 'browser' : 'http');
  const need = (f: Fetcher | undefined, name: string): Fetcher => {
    if (!f) throw new Error(`SERP_FETCHER=${mode} needs the ${name} fetcher`);
    return f;
  };
  // fail at wiring time, not on the first job
  if (mode !== 'browser') need(http, 'http');
  if (mode !== 'http') need(browser, 'browser');

  /**
   * auto: the AI Overview streams in after load and only ever sits on the first page, so only that page pays for the
   * browser's render wait; every other page takes the http fast path with the cookies the browser's session earned.
   */
  const fetcherFor = (start: number, captureAio: boolean): Fetcher => {
    if (mode === 'http') return http!;
    if (mode === 'browser') return browser!;
    return start === 0 && captureAio ? browser! : http!;
  };

  const crawl = async (message: JobMessage, opts: CrawlOptions): Promise<CrawlOutcome> => {
    const packer = createRawPacker(opts.rawSink, (deps.hashing ?? inlineHashing).start());
    const meter = createCostMeter();
    let firstRequestAt: string | undefined;
    const sent = () => {
      firstRequestAt ??= new Date().toISOString();
    };
    try {
      const outcome = await crawlInto(packer, meter, message, opts, sent);
      return { ...outcome, cost: meter.cost(deps.sessions), ...(firstRequestAt ? { firstRequestAt } : {}) };
    } finally {
      // failed, thrown or aborted: what was packed goes (nothing once finished)
      packer.discard();
    }
  };

  const crawlInto = async (
    packer: RawPacker,
    meter: CostMeter,
    message: JobMessage,
    opts: CrawlOptions,
    onSent: () => void,
  ): Promise<CrawlOutcome> => {
    const request = message.request;
    const share: RequestShare | undefined = !deps.settings.fairShare
      ? undefined
      : {
          lane: message.lane ?? 'live',
          key: message.keyId,
          ...(message.weight !== undefined ? { weight: message.weight } : {}),
        };
    const kept: KeptPage[] = [];
    /** the kept pages not packed yet go into the raw HTML; only their parsed page stays for the merge */
    const packTaken = () => {
      for (let i = packer.pages; i < kept.length; i++) {
        const { raw, ...page } = kept[i]!;
        if (raw) packer.add(raw);
        kept[i] = page;
      }
    };
    let blocks = 0;
    let exhausted = false;
    let reason: string | undefined;
    let failure: CrawlFailure | undefined;
    let used: TargetingUsed | undefined;
    let placing: Placing | undefined;
    const inFlight = new Map<number, InFlight>();
    try {
      const origin = googleOrigin(request, deps.settings.googleOrigin);
      // resolved at submit where the geotargets are (docs/locations.md); a job from before that is resolved here
      const targeting = message.targeting ?? deps.resolveTargeting?.(request);
      used = targetingUsed(request, targeting);
      // each page judged where Google placed it, and fetched again on another route when elsewhere (placement.ts)
      placing = deps.judgeLocation
        ? createPlacing(deps.judgeLocation, request, targeting?.location, message.routes)
        : undefined;
      const fetchPage = placing ? placing.fetch : fetchPageWithRetries;
      const launch = (index: number): InFlight => {
        const abort = new AbortController();
        const start = index * 10;
        const signal = opts.signal ? AbortSignal.any([opts.signal, abort.signal]) : abort.signal;
        const settled = fetchPage(
          {
            url: buildGoogleUrl(request, { origin, start, targeting }),
            start,
            first: index === 0,
            device: request.device,
            captureAio: request.capture_aio,
            fetcher: fetcherFor(start, request.capture_aio),
            signal,
            heartbeat: opts.heartbeat,
            onBlock: () => {
              blocks += 1;
            },
            parser: deps.parser,
            meter,
            ...(share ? { share } : {}),
            onSent,
          },
          deps.sessions,
          limits,
        ).then(
          (page): Settled => ({ ok: true, page }),
          (err): Settled => ({ ok: false, err }),
        );
        return { settled, abort };
      };
      const width = Math.max(
        1,
        request.stop_domain ? deps.settings.stopDomainPagesInFlight : deps.settings.pagesInFlight,
      );
      const wanted = Math.min(limits.targetResults, depthOf(request));
      // depth 10 is one Google request: pages past what the depth needs are never asked for
      const maxPages = Math.min(limits.maxPages, pagesFor(wanted));
      let organicSoFar = 0;
      let launched = 0;
      // pages are taken in start order whatever order they arrive in; page 1 alone, then a sliding window of `width`
      for (let index = 0; index < maxPages; index++) {
        const window = index === 0 ? 1 : width;
        while (launched < maxPages && launched < index + window) {
          inFlight.set(launched, launch(launched));
          launched += 1;
        }
        const current = inFlight.get(index)!;
        const outcome = await current.settled;
        inFlight.delete(index);
        if (!outcome.ok) throw outcome.err;
        const page = outcome.page;
        kept.push(page);
        // placed elsewhere even after its retry: the search is flagged and goes no deeper
        const misplaced = placing?.misplaced(page.start);
        if (misplaced) {
          reason = misplaced.reason;
          break;
        }
        organicSoFar += rankedOn(page);
        exhausted =
          Boolean(request.stop_domain && hasDomain(page.serp.organic_results, request.stop_domain)) || isLastPage(page);
        const last = exhausted || organicSoFar >= wanted;
        // the last page is packed after the pages past it are aborted (below), so they stop as soon as they can
        if (last) break;
        packTaken();
      }
    } catch (err) {
      if (err instanceof CrawlAbortedError || opts.signal?.aborted) throw new CrawlAbortedError();
      if (err instanceof CrawlRequestError && kept.length === 0)
        return { status: 'failed', pages: [], blocks, reason: describeError(err), failure: failureOf(err) };
      reason = describeError(err);
      failure = failureOf(err);
    } finally {
      // the answer is known: pages past it are not needed, and their requests stop now (their sessions are released)
      for (const rest of inFlight.values()) rest.abort.abort();
      await Promise.all([...inFlight.values()].map((rest) => rest.settled));
    }
    if (kept.length === 0) {
      return {
        status: 'failed',
        pages: [],
        blocks,
        reason: reason ?? 'no page fetched',
        failure: failure ?? { code: 'SERP_CRAWL_UNEXPECTED' },
      };
    }
    const pages: PageFetched[] = kept.map((p) => ({
      start: p.start,
      url: p.fetched.url,
      status: p.fetched.status,
      fetchedAt: p.fetched.fetchedAt,
      organicCount: p.serp.organic_results.length,
      fetcher: p.fetcher,
    }));
    const wanted = Math.min(limits.targetResults, depthOf(request));
    const result = trimOrganic(mergePages(kept.map((p) => ({ start: p.start, serp: p.serp }))), wanted);
    packTaken();
    const raw = await packer.finish();
    return {
      status: reason ? 'partial' : 'done',
      pages,
      result,
      raw,
      blocks,
      // a partial crawl stopped for a failure, not because Google had no more
      exhausted: exhausted && !reason,
      ...(reason ? { reason } : {}),
      ...(failure ? { failure } : {}),
      ...(used ? { targeting: used } : {}),
      ...(placing ? { locationCheck: placing.check(kept) } : {}),
    };
  };

  return {
    crawl,
    async close() {
      await Promise.all([http?.close(), browser?.close(), deps.parser?.close(), deps.hashing?.close()]);
    },
  };
};
