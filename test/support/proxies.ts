import { createServer, type IncomingMessage, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect, isIP, type Socket } from 'node:net';

/**
 * Local forward proxies for the adversary (docs/adversary.md): proxy i listens on 127.0.0.1 and connects to the
 * origin from 127.0.0.(i + 2), so the fake Google sees N different clients exactly as Google sees N proxies. Both
 * ways a client may use a proxy: HTTP CONNECT tunnels and plain forwarding of absolute-URI requests. Only targets on
 * 127.0.0.0/8 are reached: anything else is refused (403), so a test can never leave the machine through them.
 */
export interface ProxyFleet {
  /** `http://[user:pass@]127.0.0.1:port`, one per proxy, for SERP_PROXY_URLS */
  urls: string[];
  /** the source address each proxy connects from, in the order of `urls` */
  addresses: string[];
  /** requests (forwarded or tunnelled) each proxy carried, and those it refused */
  stats(): { carried: number[]; refused: number };
  /** proxy `index` dies: it stops listening and drops every connection it carries (clients meet a refused port) */
  down(index: number): Promise<void>;
  /** proxy `index` comes back on the same port */
  up(index: number): Promise<void>;
  close(): Promise<void>;
}

const loopback = (host: string) => isIP(host) === 4 && host.startsWith('127.');

const authorized = (req: IncomingMessage, expected: string | undefined) =>
  expected === undefined || req.headers['proxy-authorization'] === `Basic ${Buffer.from(expected).toString('base64')}`;

export const startProxies = async (
  count: number,
  options: { credentials?: { username: string; password: string } } = {},
): Promise<ProxyFleet> => {
  const servers: Server[] = [];
  const sockets = new Set<Socket>();
  /** each proxy's own connections (clients' and upstream), so one proxy can die alone */
  const own: Set<Socket>[] = Array.from({ length: count }, () => new Set<Socket>());
  const track = (i: number, s: Socket) => {
    sockets.add(s);
    own[i]!.add(s);
    s.on('close', () => {
      sockets.delete(s);
      own[i]!.delete(s);
    });
  };
  const carried = Array.from({ length: count }, () => 0);
  let refused = 0;
  const expected = options.credentials ? `${options.credentials.username}:${options.credentials.password}` : undefined;
  const addresses = Array.from({ length: count }, (_, i) => `127.0.0.${i + 2}`);
  for (let i = 0; i < count; i++) {
    const localAddress = addresses[i]!;
    const server = createServer((req, res) => {
      let target: URL;
      try {
        target = new URL(req.url ?? '');
      } catch {
        res.writeHead(400).end('absolute URI expected');
        return;
      }
      if (!authorized(req, expected)) {
        res.writeHead(407, { 'proxy-authenticate': 'Basic realm="fleet"' }).end();
        return;
      }
      if (target.protocol !== 'http:' || !loopback(target.hostname)) {
        refused += 1;
        res.writeHead(403).end('this test proxy only reaches 127.0.0.0/8');
        return;
      }
      carried[i]! += 1;
      const headers = { ...req.headers };
      delete headers['proxy-authorization'];
      delete headers['proxy-connection'];
      const upstream = request(
        {
          host: target.hostname,
          port: target.port || 80,
          path: target.pathname + target.search,
          method: req.method,
          headers,
          localAddress,
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => res.destroy());
      res.on('close', () => upstream.destroy());
      req.pipe(upstream);
    });
    server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
      track(i, client);
      client.on('error', () => client.destroy());
      const [host = '', port = '443'] = (req.url ?? '').split(':');
      if (!authorized(req, expected)) {
        client.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="fleet"\r\n\r\n');
        return;
      }
      if (!loopback(host)) {
        refused += 1;
        client.end('HTTP/1.1 403 Forbidden\r\n\r\n');
        return;
      }
      carried[i]! += 1;
      const upstream = connect({ host, port: Number(port), localAddress }, () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        if (head.length) upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      track(i, upstream);
      upstream.on('close', () => client.destroy());
      upstream.on('error', () => client.destroy());
    });
    server.on('connection', (s) => track(i, s));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers.push(server);
  }
  const ports = servers.map((s) => (s.address() as AddressInfo).port);
  const userinfo = options.credentials
    ? `${encodeURIComponent(options.credentials.username)}:${encodeURIComponent(options.credentials.password)}@`
    : '';
  return {
    urls: ports.map((port) => `http://${userinfo}127.0.0.1:${port}`),
    addresses,
    stats: () => ({ carried: [...carried], refused }),
    async down(index) {
      const server = servers[index]!;
      if (!server.listening) return;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of own[index]!) s.destroy();
      await closed;
    },
    async up(index) {
      const server = servers[index]!;
      if (server.listening) return;
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(ports[index], '127.0.0.1', () => {
          server.off('error', reject);
          resolve();
        });
      });
    },
    async close() {
      for (const s of sockets) s.destroy();
      await Promise.all(
        servers.filter((s) => s.listening).map((s) => new Promise<void>((resolve) => s.close(() => resolve()))),
      );
    },
  };
};
