import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { WEBHOOK_URL_MAX } from '../../../contracts/webhooks.js';

/**
 * Server-side request forgery guards for webhook URLs (docs/webhooks.md): https only (plain http where the operator
 * allows it), and a host whose addresses are all public (loopback, private, link-local, multicast, carrier-grade NAT,
 * reserved and the like refused, unless the operator allows them). The host is resolved again at every delivery and
 * the connection goes to the address that was checked.
 */
export interface SafetyOptions {
  /** SERP_WEBHOOK_ALLOW_HTTP=1: plain http URLs are accepted */
  allowHttp: boolean;
  /** SERP_WEBHOOK_ALLOW_PRIVATE=1: non-public addresses are accepted (tests, on-premises receivers) */
  allowPrivate: boolean;
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Every address a host name resolves to (injectable: tests answer without DNS). */
export type Resolver = (host: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((a) => ({
    address: a.address,
    family: a.family === 6 ? 6 : 4,
  }));

export class UnsafeUrlError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnsafeUrlError';
  }
}

/** The URL as a receiver's address, or why it cannot be one (before any resolution). */
export const checkUrl = (raw: string, options: Pick<SafetyOptions, 'allowHttp'>): URL => {
  if (raw.length > WEBHOOK_URL_MAX) throw new UnsafeUrlError(`url must be at most ${WEBHOOK_URL_MAX} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UnsafeUrlError(
      `url "${raw.slice(0, 100)}" does not parse: give an absolute URL such as https://example.com/hooks`,
    );
  }
  if (url.protocol === 'http:' && !options.allowHttp) {
    throw new UnsafeUrlError(
      'url must use https (plain http is refused unless the operator sets SERP_WEBHOOK_ALLOW_HTTP=1)',
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new UnsafeUrlError(`url must use https, not ${url.protocol.replace(':', '')}`);
  }
  if (url.username || url.password) {
    throw new UnsafeUrlError('url must not carry a user name or password: deliveries are signed instead');
  }
  if (!url.hostname) throw new UnsafeUrlError('url has no host');
  // the limit holds for what is stored and sent: the normalised URL, whose percent-encoding can be 12 times longer
  // than what was typed (an emoji is 2 characters typed, 12 encoded)
  if (url.href.length > WEBHOOK_URL_MAX) {
    throw new UnsafeUrlError(
      `url must be at most ${WEBHOOK_URL_MAX} characters once normalised (percent-encoded); this one is ${url.href.length}`,
    );
  }
  return url;
};

/** the host without IPv6 brackets */
export const hostOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, '');

const v4 = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);

/**
 * The IPv4 addresses an IPv6 address carries, by the forms that embed one: IPv4-mapped (::ffff:0:0/96) and
 * IPv4-compatible (::/96), SIIT (::ffff:0:0:0/96), NAT64 (64:ff9b::/96 and the local-use 64:ff9b:1::/48, RFC 6052's
 * /48 layout), 6to4 (2002::/16), Teredo (2001::/32: its server and its client, whose address is stored inverted) and
 * ISATAP (an interface id of 0:5efe or 200:5efe). Such an address reaches the IPv4 one through a translator or a
 * tunnel, so it is judged by it: `[::127.0.0.1]` is loopback, not public.
 */
export const embeddedIPv4 = (a: ipaddr.IPv6): ipaddr.IPv4[] => {
  const p = a.parts;
  const zero = (from: number, to: number) => p.slice(from, to).every((x) => x === 0);
  // :: and ::1 are themselves (unspecified, loopback); the rest of ::/96 is IPv4-compatible
  if (zero(0, 7) && p[7]! <= 1) return [];
  if (zero(0, 5) && (p[5] === 0 || p[5] === 0xffff)) return [v4(p[6]!, p[7]!)];
  if (zero(0, 4) && p[4] === 0xffff && p[5] === 0) return [v4(p[6]!, p[7]!)];
  if (p[0] === 0x64 && p[1] === 0xff9b && zero(2, 6)) return [v4(p[6]!, p[7]!)];
  if (p[0] === 0x64 && p[1] === 0xff9b && p[2] === 1) return [v4(p[3]!, ((p[4]! & 0xff) << 8) | (p[5]! >> 8))];
  if (p[0] === 0x2002) return [v4(p[1]!, p[2]!)];
  if (p[0] === 0x2001 && p[1] === 0) return [v4(p[2]!, p[3]!), v4(p[6]! ^ 0xffff, p[7]! ^ 0xffff)];
  if ((p[4] === 0 || p[4] === 0x200) && p[5] === 0x5efe) return [v4(p[6]!, p[7]!)];
  return [];
};

const publicProblem = (address: string, range: string) =>
  `${address} is a ${range} address, not a public one (SERP_WEBHOOK_ALLOW_PRIVATE=1 allows it)`;

/** Why an address is not one deliveries may go to, or undefined when it is public. */
export const addressProblem = (address: string, allowPrivate: boolean): string | undefined => {
  if (allowPrivate) return undefined;
  if (!ipaddr.isValid(address)) return `${address} is not an IP address`;
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6') {
    const inner = embeddedIPv4(parsed as ipaddr.IPv6);
    if (inner.length > 0) {
      for (const x of inner) {
        const range = x.range();
        if (range !== 'unicast') return publicProblem(address, `${range} (${x.toString()} inside)`);
      }
      // the embedding prefix itself (6to4, Teredo, NAT64) is not the receiver: the address inside is
      return undefined;
    }
  }
  const range = parsed.range();
  return range === 'unicast' ? undefined : publicProblem(address, range);
};

/**
 * The address to connect to: the host's first address, once every address it resolves to is checked (a name that
 * also resolves to a private address is refused whole, so no answer order can slip one through).
 */
export const resolveChecked = async (url: URL, resolve: Resolver, allowPrivate: boolean): Promise<ResolvedAddress> => {
  const host = hostOf(url);
  const literal = isIP(host);
  let addresses: ResolvedAddress[];
  if (literal) addresses = [{ address: host, family: literal === 6 ? 6 : 4 }];
  else {
    try {
      addresses = await resolve(host);
    } catch (err) {
      throw new UnsafeUrlError(
        `host ${host} does not resolve (${(err as NodeJS.ErrnoException).code ?? 'lookup failed'})`,
      );
    }
  }
  if (addresses.length === 0) throw new UnsafeUrlError(`host ${host} does not resolve`);
  for (const a of addresses) {
    const problem = addressProblem(a.address, allowPrivate);
    if (problem) throw new UnsafeUrlError(literal ? problem : `host ${host} resolves to ${problem}`);
  }
  return addresses[0] as ResolvedAddress;
};
