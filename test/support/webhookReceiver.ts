import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One request the receiver got, verified (or not) with the `standardwebhooks` library alone. */
export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** what `Webhook.verify` returned; undefined when it threw (then `error` says why) */
  payload?: {
    type: string;
    timestamp: string;
    data: Record<string, unknown> & { kind?: string; job_id?: string; monitor_id?: string };
  };
  error?: string;
  at: number;
}

/** What the receiver answers a request: a status (and headers), or `hang` (never answers: a timeout). */
export type Answer = { status: number; headers?: Record<string, string> } | 'hang';

/**
 * A webhook receiver on 127.0.0.1 (docs/webhooks.md): every request is verified with `standardwebhooks` against the
 * secrets set for its path, as a user's receiver would; `answer` decides each reply (default 204).
 */
export const startReceiver = async () => {
  const received: Received[] = [];
  const secrets = new Map<string, string[]>();
  let answer: (r: Received) => Answer = () => ({ status: 204 });
  const hanging = new Set<import('node:http').ServerResponse>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const path = req.url ?? '/';
      const r: Received = { path, headers: req.headers, body, at: Date.now() };
      const errors: string[] = [];
      for (const secret of secrets.get(path) ?? []) {
        try {
          r.payload = new Webhook(secret).verify(body, req.headers as Record<string, string>) as Received['payload'];
          break;
        } catch (err) {
          errors.push((err as Error).message);
        }
      }
      if (!r.payload) r.error = errors.join('; ') || 'no secret for this path';
      received.push(r);
      const a = answer(r);
      if (a === 'hang') {
        hanging.add(res);
        res.on('close', () => hanging.delete(res));
        return;
      }
      res.writeHead(a.status, a.headers).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const origin = `http://127.0.0.1:${port}`;
  return {
    origin,
    received,
    /** the secrets a path's deliveries may be signed with (verification tries each) */
    setSecrets(path: string, list: string[]) {
      secrets.set(path, list);
    },
    setAnswer(fn: (r: Received) => Answer) {
      answer = fn;
    },
    /** waits until `pred` holds over what was received (or throws after `timeoutMs`) */
    async waitFor(pred: (all: Received[]) => boolean, what: string, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      while (!pred(received)) {
        if (Date.now() > deadline) {
          throw new Error(`receiver: timed out waiting for ${what}; got ${received.map((r) => r.path).join(', ')}`);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    /** stops listening and drops every connection: attempts meet a refused connection until `up` */
    async down() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
    /** listens again on the same port */
    async up() {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, '127.0.0.1', () => {
          server.off('error', reject);
          resolve();
        });
      });
    },
    async close() {
      if (!server.listening) return;
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
};
export type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/** the service's settings for tests with a receiver on 127.0.0.1 (plain http, private addresses, short delays) */
export const WEBHOOK_ENV = {
  SERP_WEBHOOK_ALLOW_HTTP: '1',
  SERP_WEBHOOK_ALLOW_PRIVATE: '1',
  SERP_WEBHOOK_BACKOFF_MS: '200',
  SERP_WEBHOOK_TIMEOUT_MS: '1000',
  SERP_MONITOR_TICK_MS: '200',
  SERP_TIERS: JSON.stringify({ tiny: { monthlyQuota: 5, rateLimitPerMin: 60 } }),
};
