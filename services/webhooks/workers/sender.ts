import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import {
  checkUrl,
  type Resolver,
  resolveChecked,
  type SafetyOptions,
  UnsafeUrlError,
} from '../commands/webhookSafety.js';

export interface SendOutcome {
  statusCode?: number;
  error?: string;
  latencyMs: number;
}

/** How much of a receiver's answer is read (and dropped) before the connection is closed: only its status counts. */
export const RECEIVER_BODY_CAP = 64 * 1024;

/** A lookup that answers the address already checked: the connection never resolves the host a second time. */
const pinned =
  (address: string, family: 4 | 6): LookupFunction =>
  (_host, options, callback) => {
    if ((options as { all?: boolean }).all) {
      (callback as unknown as (err: null, list: Array<{ address: string; family: number }>) => void)(null, [
        { address, family },
      ]);
    } else callback(null, address, family);
  };

const reasonOf = (err: NodeJS.ErrnoException, timeoutMs: number) => {
  if (err.message === 'timeout') return `no answer within ${timeoutMs / 1000} s`;
  switch (err.code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
      return 'connection reset';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'host unreachable';
    default:
      return err.code ? `${err.code}: ${err.message.slice(0, 200)}` : err.message.slice(0, 200);
  }
};

/**
 * POSTs one delivery (docs/webhooks.md): the URL checked again, its host resolved now and every address checked, the
 * connection made to that address (TLS still verifies the host name), redirects not followed (a 3xx is a failed
 * attempt), `timeoutMs` for the whole exchange. Never throws: the outcome says what happened.
 */
export const createSender = (options: SafetyOptions & { resolve: Resolver; timeoutMs: number; maxSockets: number }) => {
  const agents = {
    'http:': new http.Agent({ keepAlive: true, maxSockets: options.maxSockets }),
    'https:': new https.Agent({ keepAlive: true, maxSockets: options.maxSockets }),
  };
  const send = async (rawUrl: string, headers: Record<string, string>, body: string): Promise<SendOutcome> => {
    const t0 = performance.now();
    const elapsed = () => Math.round((performance.now() - t0) * 10) / 10;
    let url: URL;
    let target: { address: string; family: 4 | 6 };
    try {
      url = checkUrl(rawUrl, options);
      target = await resolveChecked(url, options.resolve, options.allowPrivate);
    } catch (err) {
      const message = err instanceof UnsafeUrlError ? err.message : String(err);
      return { error: `refused: ${message}`, latencyMs: elapsed() };
    }
    const lib = url.protocol === 'https:' ? https : http;
    return new Promise<SendOutcome>((resolve) => {
      let done = false;
      const finish = (outcome: SendOutcome) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        resolve(outcome);
      };
      const req = lib.request(
        {
          protocol: url.protocol,
          hostname: url.hostname,
          port: url.port || undefined,
          path: `${url.pathname}${url.search}`,
          method: 'POST',
          agent: agents[url.protocol as 'http:' | 'https:'],
          lookup: pinned(target.address, target.family),
          ...(url.protocol === 'https:' ? { servername: url.hostname.replace(/^\[|\]$/g, '') } : {}),
          headers: {
            ...headers,
            'content-type': 'application/json',
            'content-length': String(Buffer.byteLength(body)),
            'user-agent': 'serp-api-webhooks/1',
          },
        },
        (res) => {
          // the status is the answer: a small body is read and dropped (so the connection can serve the next
          // attempt); past RECEIVER_BODY_CAP the rest is not read, and the connection is closed instead
          let bytes = 0;
          const answered = () => finish({ statusCode: res.statusCode, latencyMs: elapsed() });
          res.on('data', (chunk: Buffer) => {
            bytes += chunk.length;
            if (bytes > RECEIVER_BODY_CAP) {
              answered();
              res.destroy();
            }
          });
          res.on('end', answered);
          res.on('error', answered);
          res.on('close', answered);
        },
      );
      const timer = setTimeout(() => req.destroy(new Error('timeout')), options.timeoutMs);
      req.on('error', (err) => finish({ error: reasonOf(err, options.timeoutMs), latencyMs: elapsed() }));
      req.end(body);
    });
  };
  return {
    send,
    close() {
      agents['http:'].destroy();
      agents['https:'].destroy();
    },
  };
};
export type Sender = ReturnType<typeof createSender>;
