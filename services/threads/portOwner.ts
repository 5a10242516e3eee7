import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * What holds a local port, for `cluster up`'s refusal to start beside it (docs/distributed.md#a-cluster-on-one-machine):
 * whether the port can be bound, which process listens there (Linux: /proc), and what it says about itself over HTTP.
 */

/** undefined when `port` can be bound on `host` now (a listener is opened and closed at once), else the error code */
export const portTaken = (port: number, host = '127.0.0.1'): Promise<string | undefined> =>
  new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? String(err)));
    srv.listen(port, host, () => srv.close(() => resolve(undefined)));
  });

/** the socket inodes listening on `port` (IPv4 and IPv6), from /proc/net */
const listeningInodes = (port: number): Set<string> => {
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      // local_address is ADDR:PORT in hex; st 0A is LISTEN; the inode is the tenth field
      const local = f[1]?.split(':')[1];
      if (local && Number.parseInt(local, 16) === port && f[3] === '0A' && f[9] && f[9] !== '0') inodes.add(f[9]);
    }
  }
  return inodes;
};

/**
 * `pid N (its command line)` of the process listening on `port`, when /proc says (Linux, and a process this user may
 * inspect); undefined otherwise.
 */
export const listeningProcess = (port: number): string | undefined => {
  const inodes = listeningInodes(port);
  if (inodes.size === 0) return undefined;
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return undefined;
  }
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      let target: string;
      try {
        target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (!inode || !inodes.has(inode)) continue;
      let command = '';
      try {
        command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
      } catch {
        // the process is gone, or not ours to read: its pid alone
      }
      return command ? `pid ${pid} (${clip(command, 120)})` : `pid ${pid}`;
    }
  }
  return undefined;
};

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** what `GET /health` on the port answers: a serp-api process names itself there (its `instance_id`) */
export const healthAnswer = async (port: number, timeoutMs = 1_500): Promise<string> => {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(timeoutMs) });
    const body = clip((await res.text()).replace(/\s+/g, ' ').trim(), 200);
    return `it answers GET /health with ${res.status}${body ? ` ${body}` : ''}`;
  } catch {
    return 'it does not answer HTTP';
  }
};

/** one line on what holds `port`: the process when known, and its HTTP answer */
export const describePortOwner = async (port: number): Promise<string> =>
  [listeningProcess(port), await healthAnswer(port)].filter(Boolean).join('; ');
