/** Cookie header bookkeeping shared by both fetchers: sessions carry cookies as one `a=1; b=2` header value. */

/** `name=value` pairs out of Set-Cookie headers (attributes dropped; an expired or empty value deletes). */
export const setCookieHeaderPairs = (setCookies: readonly string[]): Array<[string, string | undefined]> =>
  setCookies.map((line) => {
    const [pair = '', ...attrs] = line.split(';');
    const eq = pair.indexOf('=');
    const name = pair.slice(0, eq).trim();
    const value = pair.slice(eq + 1).trim();
    const expired = attrs.some((a) => /^\s*max-age\s*=\s*(0|-)/i.test(a));
    return [name, expired || value === '' ? undefined : value];
  });

export const parseCookieHeader = (header: string): Map<string, string> => {
  const out = new Map<string, string>();
  for (const part of header.split(/;\s*/)) {
    const eq = part.indexOf('=');
    if (eq > 0) out.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  return out;
};

export const mergeCookies = (header: string, updates: Iterable<[string, string | undefined]>): string => {
  const jar = parseCookieHeader(header);
  for (const [name, value] of updates) {
    if (!name) continue;
    if (value === undefined) jar.delete(name);
    else jar.set(name, value);
  }
  return [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
};
