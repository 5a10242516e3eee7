import { processEnv } from './env.js';
import { Environment } from './schema.js';

/** `serp-api-mcp`'s configuration: the service it calls and the key it calls with (spec: two variables). */
export interface McpClientConfig {
  baseUrl: string;
  apiKey: string;
}

/** SERP_API_BASE_URL and SERP_API_KEY as given (schema.ts), trimmed; undefined when unset or blank. */
const clientEnv = (env: Readonly<Record<string, string | undefined>>) => {
  const e = Environment.pick({ SERP_API_BASE_URL: true, SERP_API_KEY: true }).parse(env);
  return { base: e.SERP_API_BASE_URL?.trim(), apiKey: e.SERP_API_KEY?.trim() };
};

/** Reads SERP_API_BASE_URL and SERP_API_KEY; every problem is one line a user can act on. */
export const loadMcpClientConfig = (
  env: Readonly<Record<string, string | undefined>> = processEnv(),
): { ok: true; config: McpClientConfig } | { ok: false; problems: string[] } => {
  const problems: string[] = [];
  const { base, apiKey } = clientEnv(env);
  if (!base)
    problems.push(
      'SERP_API_BASE_URL is not set: give the address of a running serp-api service, e.g. http://127.0.0.1:8080',
    );
  else {
    let url: URL | undefined;
    try {
      url = new URL(base);
    } catch {
      problems.push(`SERP_API_BASE_URL "${base}" is not a URL: give one such as http://127.0.0.1:8080`);
    }
    if (url && url.protocol !== 'http:' && url.protocol !== 'https:')
      problems.push(`SERP_API_BASE_URL "${base}" must be an http:// or https:// address`);
  }
  if (!apiKey) problems.push('SERP_API_KEY is not set: give an API key (serp-api keys create --tier free)');
  if (problems.length || !base || !apiKey) return { ok: false, problems };
  return { ok: true, config: { baseUrl: base.replace(/\/+$/, ''), apiKey } };
};

/**
 * The CLI's HTTP commands (`serp-api batch`, `search`): the service and key from the environment, each undefined when
 * unset (the command's flags win, and the base URL defaults to a local service there).
 */
export const loadCliClientEnv = (
  env: Readonly<Record<string, string | undefined>> = processEnv(),
): { baseUrl?: string; apiKey?: string } => {
  const { base, apiKey } = clientEnv(env);
  return { ...(base ? { baseUrl: base } : {}), ...(apiKey ? { apiKey } : {}) };
};

/** SERP_CLIENT_POLL_MS (schema.ts): the pause between two polls of a job a client waits for, in ms (before jitter). */
export const loadClientPollMs = (env: Readonly<Record<string, string | undefined>> = processEnv()): number =>
  Environment.pick({ SERP_CLIENT_POLL_MS: true }).parse(env).SERP_CLIENT_POLL_MS;
