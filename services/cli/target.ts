import { existsSync, readFileSync } from 'node:fs';
import type { Config } from '../compose/config.js';
import { dataPaths } from '../compose/embedded.js';
import { loadOrCreateSecrets } from '../compose/secrets.js';

/**
 * Where key commands go: the admin api of a running service (`--base-url`, or the one the data directory says is
 * running), else the data directory itself. Either way a revoked key is refused on its very next request.
 */
export const runningServer = async (
  config: Config,
  baseUrl?: string,
): Promise<{ url: string; token: string } | undefined> => {
  let url = baseUrl;
  if (!url) {
    const file = dataPaths(config.dataDir).server;
    if (!existsSync(file)) return undefined;
    url = (JSON.parse(readFileSync(file, 'utf8')) as { url: string }).url;
  }
  const token = config.adminToken ?? loadOrCreateSecrets(config.dataDir, {}).secrets.adminToken;
  try {
    const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2000) });
    if (res.ok) return { url, token };
  } catch (err) {
    if (baseUrl) throw new Error(`no service answers at ${baseUrl}: ${(err as Error).message}`);
  }
  return undefined;
};

export const adminCall = async (
  server: { url: string; token: string },
  method: string,
  path: string,
  body?: unknown,
): Promise<unknown> => {
  const res = await fetch(`${server.url}/admin/api${path}`, {
    method,
    headers: { authorization: `Bearer ${server.token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = (await res.json()) as { detail?: string };
  if (!res.ok) throw new Error(json.detail ?? `admin api answered ${res.status}`);
  return json;
};
