import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Test } from 'tap';
import { loadTestSettings } from '../../services/config/tests.js';
import { type FakeGoogle, type FakeGoogleOptions, startFakeGoogle } from './fakeGoogle.js';
import { CHROMIUM_HOST_RULES } from './loopback.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * How a test starts the CLI (and `serve`): node's arguments before the command. The test runner builds dist/ once
 * before a run and sets SERP_TEST_BUILT=1 (docs/testing.md#the-build-the-tests-run): each service and CLI process
 * then starts from the compiled JavaScript, as `npm start` runs it, instead of compiling the sources through tsx on
 * every start (about 2× the CPU of a start). Run alone (`npx tap file`), a test runs the sources, never a dist/ that
 * may be stale. `from`: another copy of the sources (a test that swaps one file) always runs through tsx.
 */
export const cliEntry = (from: string = root): string[] =>
  loadTestSettings().testBuilt && from === root
    ? [join(root, 'dist', 'services', 'cli', 'main.js')]
    : ['--import', 'tsx', join(from, 'services', 'cli', 'main.ts')];
export const cliArgs = cliEntry();
const run = promisify(execFile);

export const tempDataDir = (name = 'serp') => mkdtempSync(join(tmpdir(), `${name}-`));

/** Runs the real CLI (`serp-api …`) from the sources, as a user would, and returns its stdout. */
export const cli = async (args: string[], env: NodeJS.ProcessEnv = {}) => {
  const { stdout } = await run(process.execPath, [...cliArgs, ...args], {
    cwd: root,
    env: { ...process.env, ...env },
    maxBuffer: 16 * 1024 * 1024,
  });
  return stdout;
};

/** The CLI as a user sees it, success or not: exit code, stdout and stderr (execFile rejects on a non-zero exit). */
export const cliResult = async (args: string[], env: NodeJS.ProcessEnv = {}) => {
  try {
    const { stdout, stderr } = await run(process.execPath, [...cliArgs, ...args], {
      cwd: root,
      env: { ...process.env, ...env },
      maxBuffer: 16 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
};

/** pacing off and short cooldowns (1 s doubling to 4 s), for tests whose subject is not the fleet: a blocked search
 * gives up in seconds instead of minutes */
export const UNPACED = { SERP_ROUTE_MAX_RPM: '0', SERP_ROUTE_COOLDOWN_S: '1', SERP_ROUTE_COOLDOWN_MAX_S: '4' };
/** a service's Chromium resolves loopback names only (support/loopback.ts) */
export const LOOPBACK_ONLY = { SERP_CHROMIUM_HOST_RULES: CHROMIUM_HOST_RULES };

export interface RunningService {
  url: string;
  child: ChildProcess;
  stderr: () => string;
  /** what it logged on stdout (JSON lines), the last megabytes */
  stdout: () => string;
  /** SIGTERM and wait (a clean drain) */
  stop(): Promise<void>;
  /** SIGKILL: the crash */
  kill(): Promise<void>;
}

/**
 * `serp-api serve --port 0` in a child process: real HTTP through a listening port. `from`: another copy of the
 * sources to run (a test that swaps one file of the service for its own).
 */
export const startService = async (
  dataDir: string,
  env: NodeJS.ProcessEnv = {},
  from: string = root,
): Promise<RunningService> => {
  // SERP_TEST_NODE_ARGS: extra node flags for the service only, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" (Node
  // refuses --cpu-prof in NODE_OPTIONS)
  const nodeArgs = (env.SERP_TEST_NODE_ARGS ?? loadTestSettings().testNodeArgs ?? '').split(' ').filter(Boolean);
  const entry = cliEntry(from);
  const child = spawn(process.execPath, [...nodeArgs, ...entry, 'serve', '--port', '0', '--data', dataDir], {
    cwd: from,
    // tests not about the fleet (docs/fleet.md) crawl unpaced, with short cooldowns (UNPACED)
    env: { ...process.env, SERP_LOG_LEVEL: 'warn', SERP_FETCHER: 'http', ...UNPACED, ...LOOPBACK_ONLY, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  // the JSON log lines (stdout), the last 4 MB of them
  let out = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
    if (out.length > 4_000_000) out = out.slice(-2_000_000);
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start:\n${err}`)), 60_000);
    child.stderr?.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`service exited with ${code}:\n${err}`));
    });
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return {
    url,
    child,
    stderr: () => err,
    stdout: () => out,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
    async kill() {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
};

export const removeDir = (dir: string) => rmSync(dir, { recursive: true, force: true });

/** Polls a job until it is no longer 202, as the spec's recommended client loop does. */
export const pollJob = async (url: string, key: string, jobId: string, output = 'json', timeoutMs = 60_000) => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await fetch(`${url}/v1/search/${jobId}?output=${output}`, { headers: { 'x-api-key': key } });
    if (res.status !== 202 || Date.now() > deadline) return res;
    await res.arrayBuffer();
    await new Promise((r) => setTimeout(r, 100));
  }
};

export const submit = (url: string, key: string, body: unknown) =>
  fetch(`${url}/v1/search`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

export interface Stack {
  google: FakeGoogle;
  data: string;
  svc: RunningService;
  /** `serp-api keys create --json --data <data> …args` through the real CLI */
  mintKey(args: string[]): Promise<{ key: string; key_id: string }>;
}

/**
 * The end-to-end setup most tests share: a fake Google origin, a fresh data directory and `serp-api serve` aimed at
 * that origin, all torn down with the test. `teardown: 'kill'` skips the drain (for crawls parked at a slow origin).
 */
export const startStack = async (
  t: Test,
  options: {
    google?: FakeGoogleOptions;
    env?: NodeJS.ProcessEnv;
    teardown?: 'stop' | 'kill';
    /** another copy of the sources to serve from (startService's `from`) */
    from?: string;
  } = {},
): Promise<Stack> => {
  const google = await startFakeGoogle(options.google ?? {});
  const data = tempDataDir();
  const svc = await startService(data, { SERP_GOOGLE_ORIGIN: google.origin, ...options.env }, options.from);
  t.teardown(async () => {
    await (options.teardown === 'kill' ? svc.kill() : svc.stop());
    await google.close();
    removeDir(data);
  });
  return {
    google,
    data,
    svc,
    mintKey: async (args) => JSON.parse(await cli(['keys', 'create', ...args, '--json', '--data', data])),
  };
};

/**
 * A compiled copy of the service in `outDir` (a test that lays out a checkout of its own): the build the test runner
 * made for this run when there is one (cliEntry), else `tsc -p tsconfig.build.json` into it.
 */
export const buildInto = async (outDir: string) => {
  if (loadTestSettings().testBuilt) {
    cpSync(join(root, 'dist'), outDir, { recursive: true });
    return;
  }
  await run(process.execPath, [
    join(root, 'node_modules', 'typescript', 'bin', 'tsc'),
    '-p',
    join(root, 'tsconfig.build.json'),
    '--outDir',
    outDir,
  ]);
};
