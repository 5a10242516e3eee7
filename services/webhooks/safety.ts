import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { WEBHOOK_URL_MAX } from '../../contracts/webhooks.js';

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
  return url;
};

/** the host without IPv6 brackets */
export const hostOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, '');

/** Why an address is not one deliveries may go to, or undefined when it is public. */
export const addressProblem = (address: string, allowPrivate: boolean): string | undefined => {
  if (allowPrivate) return undefined;
  if (!ipaddr.isValid(address)) return `${address} is not an IP address`;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  }
  const range = parsed.range();
  return range === 'unicast'
    ? undefined
    : `${address} is a ${range} address, not a public one (SERP_WEBHOOK_ALLOW_PRIVATE=1 allows it)`;
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
