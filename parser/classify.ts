/** What kind of page Google served. Only a `serp` may ever be stored as a result; the others make the crawler retry. */
export type PageKind = 'serp' | 'captcha' | 'js_challenge' | 'consent' | 'error';

export interface ClassifyContext {
  status?: number;
  finalUrl?: string;
}

/**
 * A result page carries one of these whatever the layout (desktop, mobile, basic, 2020–2026): `id="rso"`,
 * `id="search"`, `id="main"`, `id="res"`, `id="tsf"`, `id="topstuff"`, or (pages saved unquoted) `id=rso`,
 * `id=search`, `id=main`. One regex pass finds any of them: separate `includes` calls scanned a page once per marker
 * it lacks, and `#rso` sits near the end of the page.
 */
const SERP_MARKER = /id=(?:"(?:rso|search|main|res|tsf|topstuff)"|rso|search|main)/;

/**
 * Classifies on markers that do not depend on the interface language (URLs, ids, form actions); the
 * `<title>` text is only a last resort for the error page, whose markup has no stable id.
 */
export const classifyPage = (html: string, ctx: ClassifyContext = {}): PageKind => classifyWithDetail(html, ctx).kind;

export const classifyWithDetail = (html: string, ctx: ClassifyContext = {}): { kind: PageKind; detail: string } => {
  const url = ctx.finalUrl ?? '';
  if (/^https?:\/\/(?:ipv4\.|ipv6\.)?(?:www\.)?google\.[a-z.]+\/sorry\//i.test(url) || /\/\/sorry\.google\./.test(url))
    return { kind: 'captcha', detail: `redirected to ${url}` };
  if (/^https?:\/\/consent\.google\./i.test(url)) return { kind: 'consent', detail: `redirected to ${url}` };
  const looksLikeSerp = SERP_MARKER.test(html);
  // Interstitials are small pages whose markers sit in their first few kB (CAPTCHA pages are ~5 kB with the form
  // in the first 1.5 kB; the JS challenge names /enablejs in its first 500 bytes). On a page with result markup
  // only its first 64 kB are searched for a CAPTCHA form: scanning 300 kB of a 700 kB SERP for "captcha" cost a
  // few hundred µs, more than finding the result markup.
  const head = html.slice(0, looksLikeSerp ? 64_000 : 300_000);
  if (
    head.includes('id="captcha-form"') ||
    (head.includes('g-recaptcha') && head.includes('/sorry/')) ||
    (!looksLikeSerp && /\/sorry\/index|unusual traffic from your computer/i.test(head))
  )
    return { kind: 'captcha', detail: 'Google CAPTCHA ("unusual traffic") page' };
  // Real result pages carry the same noscript refresh for JS-less visitors; only the bare shell lacks the search form.
  if (!looksLikeSerp && head.includes('/httpservice/retry/enablejs'))
    return {
      kind: 'js_challenge',
      detail: 'Google JavaScript challenge (noscript refresh to /httpservice/retry/enablejs)',
    };
  if (!looksLikeSerp && /action="https:\/\/consent\.google\.[a-z.]+/.test(head))
    return { kind: 'consent', detail: 'Google consent interstitial (consent.google.com form)' };
  // Google's error pages are titled "Error 502 (Server Error)!!1" and have no result markup; a result page's title
  // is the query, which may itself read "Error 404 (Not Found)".
  const title = looksLikeSerp ? '' : (/<title>([^<]*)<\/title>/i.exec(head)?.[1] ?? '');
  if (/^Error \d{3}/.test(title) || (!looksLikeSerp && /That(?:’|&#8217;|')s an error/.test(head)))
    return { kind: 'error', detail: `Google error page: ${title || 'no title'}` };
  if (ctx.status !== undefined && ctx.status >= 400) return { kind: 'error', detail: `HTTP ${ctx.status} from Google` };
  if (!looksLikeSerp && html.trim().length === 0) return { kind: 'error', detail: 'empty response body' };
  return { kind: 'serp', detail: '' };
};
