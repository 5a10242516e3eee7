import { createV1Client, type V1Client } from '../client/v1Client.js';
import { loadCliClientEnv } from '../config/clients.js';
import { processEnv } from '../config/env.js';
import { DEFAULT_SERVICE_URL, Environment } from '../config/schema.js';

/** The flags every HTTP command of the CLI takes (`search`, `batch`, `monitors …`). */
export interface ServiceFlags {
  baseUrl?: string;
  key?: string;
  data?: string;
}

/**
 * Where an HTTP command finds the service (docs/cli.md#finding-the-service), first match wins: `--base-url`,
 * SERP_API_BASE_URL, the service running on the data directory (`--data`, else SERP_DATA_DIR: the url its
 * `server.json` names, as `keys` finds it), else DEFAULT_SERVICE_URL. The data directory is looked at only when
 * neither names one, and its module is loaded only then: a command with a URL starts without it.
 */
export const serviceUrl = async (o: Pick<ServiceFlags, 'baseUrl' | 'data'>): Promise<string> => {
  const given = o.baseUrl ?? loadCliClientEnv().baseUrl;
  if (given !== undefined) {
    if (!/^https?:\/\/[^\s]+$/.test(given)) throw new Error(`--base-url must be an http(s) URL, got "${given}"`);
    return given.replace(/\/+$/, '');
  }
  const dataDir = o.data ?? Environment.pick({ SERP_DATA_DIR: true }).parse(processEnv()).SERP_DATA_DIR;
  const { localService } = await import('./target.js');
  const running = await localService({ dataDir });
  return running?.url ? running.url : DEFAULT_SERVICE_URL;
};

/** the /v1 client of an HTTP command: its service found as `serviceUrl` says, its key `--key` or SERP_API_KEY */
export const serviceClient = async (o: ServiceFlags): Promise<V1Client> => {
  const key = o.key ?? loadCliClientEnv().apiKey;
  if (!key) throw new Error('no API key: pass --key or set SERP_API_KEY');
  return createV1Client({ baseUrl: await serviceUrl(o), apiKey: key });
};

/** the options of `ServiceFlags`, worded once for every command that takes them */
export const SERVICE_OPTIONS = {
  baseUrl: [
    '--base-url <url>',
    `the service (SERP_API_BASE_URL; default: the one running on the data directory, else ${DEFAULT_SERVICE_URL})`,
  ],
  key: ['--key <key>', 'your API key (SERP_API_KEY)'],
  data: ['--data <dir>', 'the data directory whose running service to call (SERP_DATA_DIR)'],
} as const;
