import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { alive, dataPaths } from '../compose/embedded/core.js';
import type { Config } from '../config/config.js';

/** A service that `server.json` in the data directory names, and whose process is still alive. */
export interface LocalService {
  url: string;
  pid?: number;
}

const healthy = async (url: string) => {
  try {
    const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2000) });
    await res.arrayBuffer();
    return res.ok ? undefined : `/health answered ${res.status}`;
  } catch (err) {
    return (err as Error).message;
  }
};

const pidIn = (file: string) => {
  try {
    const n = Number(readFileSync(file, 'utf8').trim());
    return Number.isInteger(n) && n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
};

const serverJson = (file: string) => {
  if (!existsSync(file)) return undefined;
  try {
    const named = JSON.parse(readFileSync(file, 'utf8')) as { url?: unknown; pid?: unknown };
    return {
      url: typeof named.url === 'string' ? named.url : undefined,
      pid: typeof named.pid === 'number' ? named.pid : undefined,
    };
  } catch {
    return undefined; // being written or torn: as if it were not there yet
  }
};

/**
 * The service running on the data directory, if any. Its projector owns read.db: a command that finds one must not
 * open its own projector there (two would apply the same events twice). Process ids decide, not the health check:
 * `serve.lock` names the service from before its projector starts until after it stops, so a service still starting
 * or draining counts as running, and a lock or `server.json` left by a crash (its process gone) does not. The url
 * comes from `server.json` (empty while the service is not listening yet). Reads only: nothing is created.
 */
export const localService = async (config: Pick<Config, 'dataDir'>): Promise<LocalService | undefined> => {
  const paths = dataPaths(config.dataDir);
  const named = serverJson(paths.server);
  const holder = pidIn(paths.lock);
  if (holder !== undefined && holder !== process.pid && alive(holder)) {
    return { url: named?.pid === holder ? (named.url ?? '') : '', pid: holder };
  }
  if (!named?.url) return undefined;
  if (named.pid !== undefined)
    return alive(named.pid) && named.pid !== process.pid ? { url: named.url, pid: named.pid } : undefined;
  return (await healthy(named.url)) === undefined ? { url: named.url } : undefined;
};

const describe = (s: LocalService) => `${s.pid !== undefined ? `pid ${s.pid}, ` : ''}${s.url || 'no url yet'}`;

/** The error a command that must not run beside a service throws. */
export const serviceRunningError = (config: Config, s: LocalService, what: string) =>
  new Error(`a service is running on ${config.dataDir} (${describe(s)}): stop the service first, then ${what}`);

/** The data directory's secrets, read without creating them (undefined when there are none yet). */
export const readStoredAdminToken = (dataDir: string): string | undefined => {
  const file = join(dataDir, 'secrets.json');
  if (!existsSync(file)) return undefined;
  try {
    const token = (JSON.parse(readFileSync(file, 'utf8')) as { adminToken?: unknown }).adminToken;
    return typeof token === 'string' && token ? token : undefined;
  } catch {
    return undefined;
  }
};

export interface AdminTarget {
  url: string;
  token: string;
}

/**
 * Where key commands go (docs/operations.md#keys): with `--base-url`, that service's admin api and nothing else (a
 * service that does not answer is an error, never a reason to write the local data directory); without it, the admin
 * api of the service running on the data directory; undefined when none runs, so the caller writes the data directory
 * itself. The token is `--admin-token`, else SERP_ADMIN_TOKEN, else the one stored in the data directory (read, never
 * made).
 */
export const adminTarget = async (
  config: Config,
  opts: { baseUrl?: string; adminToken?: string },
): Promise<AdminTarget | undefined> => {
  const token = (url: string) => {
    const t = opts.adminToken ?? config.adminToken ?? readStoredAdminToken(config.dataDir);
    if (!t) {
      throw new Error(
        `no admin token for ${url}: give --admin-token or set SERP_ADMIN_TOKEN (none stored in ${config.dataDir})`,
      );
    }
    return t;
  };
  if (opts.baseUrl) {
    const url = opts.baseUrl.replace(/\/+$/, '');
    const problem = await healthy(url);
    if (problem) throw new Error(`no service answers at ${url}: ${problem}`);
    return { url, token: token(url) };
  }
  const local = await localService(config);
  if (!local) return undefined;
  const url = local.url;
  const problem = url ? await healthy(url) : 'it is not listening yet';
  if (problem) {
    throw new Error(
      `a service is running on ${config.dataDir} (${describe(local)}) but does not answer (${problem}): retry once it is up, or stop it`,
    );
  }
  return { url, token: token(url) };
};

export const adminCall = async (
  server: AdminTarget,
  method: string,
  path: string,
  body?: unknown,
): Promise<unknown> => {
  const res = await fetch(`${server.url}/admin/api${path}`, {
    method,
    headers: { authorization: `Bearer ${server.token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  let json: { detail?: string } | undefined;
  try {
    json = JSON.parse(text) as { detail?: string };
  } catch {
    json = undefined;
  }
  if (!res.ok) throw new Error(json?.detail ?? `admin api at ${server.url} answered ${res.status}`);
  if (json === undefined) throw new Error(`admin api at ${server.url} answered something that is not JSON`);
  return json;
};
