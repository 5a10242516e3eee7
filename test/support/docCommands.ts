import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Test } from 'tap';
import { freePort } from '../../services/cli/dev/natsServer.js';
import { loadTestSettings } from '../../services/config/tests.js';
import { portTaken } from '../../services/threads/portOwner.js';
import { fixturesDir } from './fixtures.js';
import { LOOPBACK_ONLY } from './service.js';

/**
 * The documents' shell blocks, run as written, in order, with bash, as a doc-test runs its examples
 * (docs/testing.md#the-documents-commands). Each document runs in a copy of the checkout of its own: a block that
 * runs until Ctrl-C (`npm start`, `npm run fake-google`, `npm run cluster`: a terminal of its own in the docs) is
 * started in the background and waited for until it says it is ready; every other block runs in one bash session,
 * the terminal the reader types in (variables carry from block to block), under `set -eo pipefail`, with curl failing
 * on an HTTP error answer. What is substituted, and why, is said at each piece below and in docs/testing.md.
 */

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface ShellBlock {
  doc: string;
  /** 1-based, among the document's shell blocks */
  n: number;
  /** the line of its opening fence */
  line: number;
  text: string;
}

/** The ```sh / ```bash / ```shell blocks of a markdown document, in order. */
export const shellBlocks = (doc: string, markdown: string): ShellBlock[] => {
  const blocks: ShellBlock[] = [];
  let fence: { shell: boolean; line: number; lines: string[] } | undefined;
  markdown.split('\n').forEach((text, i) => {
    if (fence) {
      if (/^```\s*$/.test(text)) {
        if (fence.shell) blocks.push({ doc, n: blocks.length + 1, line: fence.line, text: fence.lines.join('\n') });
        fence = undefined;
      } else fence.lines.push(text);
      return;
    }
    const open = /^```(\S*)/.exec(text);
    if (open) fence = { shell: ['sh', 'bash', 'shell'].includes(open[1]!), line: i + 1, lines: [] };
  });
  return blocks;
};

export const where = (b: ShellBlock) => `${b.doc}, block ${b.n} (line ${b.line})`;

/** The commands of a block: comments and blank lines dropped, continued lines joined. */
export const commandLines = (text: string): string[] =>
  text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.replace(/\s+#.*$/, '').trim())
    .filter((l) => l && !l.startsWith('#'));

/**
 * Commands that run until Ctrl-C, each in a terminal of its own in the docs, and what they print once they serve. A
 * block that is one of these alone is started in the background; a new kind of server in the docs is added here.
 */
export const SERVERS = [
  { name: 'npm start', command: /(?:^|\s)npm start$/, ready: /listening on http:\/\/\S+/ },
  { name: 'npm run fake-google', command: /(?:^|\s)npm run fake-google(?: -- .*)?$/, ready: /^fake Google on http/m },
  { name: 'npm run cluster', command: /(?:^|\s)npm run cluster(?: -- .*)?$/, ready: /^cluster up: /m },
] as const;

export const serverOf = (b: ShellBlock) => {
  const lines = commandLines(b.text);
  return lines.length === 1 ? SERVERS.find((s) => s.command.test(lines[0]!)) : undefined;
};

/** A block that is not run, with the reason: the test fails when an entry matches no block (it cannot go stale). */
export interface NotRun {
  doc: string;
  /** the block's first line starts with this */
  starts: string;
  why: string;
}

export interface DocPorts {
  /** 8080: the service, the cluster's first api (the cluster's other processes take the five after it) */
  service: number;
  /** 8090: the fake Google */
  google: number;
  /** 3000: a webhook receiver */
  receiver: number;
}

/**
 * The documented ports, replaced by the test's where a block names them as a port (after `:`, `(`, `--port `,
 * `port: `); 8081 is the cluster's second api. `localhost:` becomes `127.0.0.1:`, so curl never tries ::1 (a test's
 * traffic stays on 127.0.0.0/8).
 */
export const substitutePorts = (text: string, ports: DocPorts): string => {
  const to: Record<string, number> = {
    8080: ports.service,
    8081: ports.service + 1,
    8090: ports.google,
    3000: ports.receiver,
  };
  return text
    .replace(/\blocalhost:(?=\d)/g, '127.0.0.1:')
    .replace(/(?<=[:(]|--port[ =]|port: ?)(8080|8081|8090|3000)\b/g, (p) => String(to[p]));
};

/**
 * Free ports for one document: six in a row for the service (a cluster's processes), below the ephemeral range the
 * other tests' port-0 servers are given, and two more.
 */
export const freeDocPorts = async (): Promise<DocPorts> => {
  for (let attempt = 0; attempt < 50; attempt++) {
    const service = 10_000 + Math.floor(Math.random() * 20_000);
    const taken = await Promise.all(Array.from({ length: 6 }, (_, i) => portTaken(service + i)));
    if (taken.every((code) => code === undefined))
      return { service, google: await freePort(), receiver: await freePort() };
  }
  throw new Error('no six free ports in a row between 10000 and 30000');
};

const NPM_SHIM = `#!/usr/bin/env bash
# npm as the doc-command test runs the documents (docs/testing.md#the-documents-commands): offline; \`npm install\` links
# packages from the checkout's node_modules; \`npm run build\` is skipped (dist/ is the test run's build); the fake
# Google and the cluster listen on the test's ports
set -e
case "$1" in
  install|i|add)
    shift
    linked=0
    for a in "$@"; do
      case "$a" in -*) continue ;; esac
      name=$(printf '%s' "$a" | sed -E 's/^(@?[^@]+)@.*/\\1/')
      if [ ! -d "$DOC_TEST_MODULES/$name" ]; then
        echo "doc test: npm install $a: not in the checkout's node_modules (the test installs nothing from the network)" >&2
        exit 1
      fi
      mkdir -p "node_modules/$(dirname "$name")"
      ln -sfn "$DOC_TEST_MODULES/$name" "node_modules/$name"
      echo "doc test: npm install $a: linked from the checkout's node_modules"
      linked=1
    done
    [ "$linked" = 1 ] || echo "doc test: npm install: the checkout's node_modules"
    exit 0 ;;
  run)
    case "$2" in
      build) echo "doc test: npm run build skipped (the test runs its run's dist/, or the sources when run alone)"; exit 0 ;;
      fake-google|cluster)
        script=$2
        shift 2
        [ "$1" = -- ] && shift
        if [ "$script" = fake-google ]; then port=$DOC_TEST_GOOGLE_PORT; else port=$DOC_TEST_SERVICE_PORT; fi
        exec "$DOC_TEST_NPM" run "$script" -- "$@" --port "$port" ;;
    esac ;;
esac
exec "$DOC_TEST_NPM" "$@"
`;

const CURL_SHIM = `#!/usr/bin/env bash
# curl as the doc-command test runs it (docs/testing.md#the-documents-commands): an HTTP error answer (4xx, 5xx) fails
# the command, its body still printed, so a documented request the service refuses fails its block
for a in "$@"; do
  case "$a" in
    --fail|--fail-with-body) exec "$DOC_TEST_CURL" "$@" ;;
    --*) ;;
    -*f*) exec "$DOC_TEST_CURL" "$@" ;;
  esac
done
exec "$DOC_TEST_CURL" --fail-with-body "$@"
`;

const which = (cmd: string) => execFileSync('bash', ['-c', `command -v ${cmd}`], { encoding: 'utf8' }).trim();

/**
 * Why the documents cannot run here (no curl: the documents call it), or undefined. Under CI=true it throws instead:
 * .ci/run installs curl, so a skip there would hide a broken install.
 */
export const docCommandsUnavailable = (): string | undefined => {
  try {
    which('curl');
    return undefined;
  } catch {
    if (process.env.CI === 'true') throw new Error('curl is not installed: CI requires it (.ci/run installs it)');
    return 'curl is not installed: the documents call it';
  }
};

/**
 * A copy of the checkout for one document: the sources and bin/ copied (so the built CLI, the cluster and the
 * dashboard's files are found from here, not from the checkout), dist/ copied when the runner built it for this run,
 * after the sources, so its build stamp is newer than they are and `npm start` builds nothing (a file run alone has no
 * dist/: its first `npm start` builds one in the copy, docs/testing.md), the rest linked; `.data`,
 * `.cluster`, `mktemp` folders and npm's cache all land inside it.
 */
const makeSandbox = () => {
  const dir = mkdtempSync(join(tmpdir(), 'serp-doc-'));
  for (const name of ['bin', 'contracts', 'domain', 'projections', 'parser', 'services', 'package.json']) {
    cpSync(join(root, name), join(dir, name), { recursive: true });
  }
  for (const name of [
    'node_modules',
    'data',
    'public',
    'scripts',
    'test',
    'docs',
    'tsconfig.json',
    'tsconfig.build.json',
  ]) {
    symlinkSync(join(root, name), join(dir, name));
  }
  if (loadTestSettings().testBuilt) cpSync(join(root, 'dist'), join(dir, 'dist'), { recursive: true });
  const shims = join(dir, '.doc-test-bin');
  mkdirSync(shims);
  mkdirSync(join(dir, '.tmp'));
  // tsx keeps what it compiled in TMPDIR/tsx-<uid>: the machine's, not a cold one per copy (npm run fake-google runs
  // through tsx)
  const tsxCache = `tsx-${process.geteuid?.() ?? userInfo().username}`;
  mkdirSync(join(tmpdir(), tsxCache), { recursive: true });
  symlinkSync(join(tmpdir(), tsxCache), join(dir, '.tmp', tsxCache));
  for (const [name, text] of [
    ['npm', NPM_SHIM],
    ['curl', CURL_SHIM],
  ] as const) {
    writeFileSync(join(shims, name), text);
    chmodSync(join(shims, name), 0o755);
  }
  return { dir, shims };
};

/**
 * The reader's environment: this process's without the test runner's own variables (SERP_*, tap's, npm's, NODE_OPTIONS),
 * plus what the substitutions need. SERP_GOOGLE_ORIGIN points at a port that refuses: a block that forgets the fake
 * Google's origin fails, instead of crawling live Google.
 */
const readerEnv = (sandbox: { dir: string; shims: string }, ports: DocPorts): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!/^(SERP_|TAP|_TAPJS|npm_|NODE_OPTIONS$|INIT_CWD$)/.test(k)) env[k] = v;
  }
  return {
    ...env,
    PATH: `${sandbox.shims}:${process.env.PATH}`,
    TMPDIR: join(sandbox.dir, '.tmp'),
    npm_config_cache: join(sandbox.dir, '.npm'),
    npm_config_offline: 'true',
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
    DOC_TEST_NPM: which('npm'),
    DOC_TEST_CURL: which('curl'),
    DOC_TEST_MODULES: join(root, 'node_modules'),
    DOC_TEST_GOOGLE_PORT: String(ports.google),
    DOC_TEST_SERVICE_PORT: String(ports.service),
    SERP_PORT: String(ports.service),
    SERP_API_BASE_URL: `http://127.0.0.1:${ports.service}`,
    SERP_FIXTURES_DIR: fixturesDir,
    SERP_GOOGLE_ORIGIN: 'http://127.0.0.1:9',
    ...LOOPBACK_ONLY,
  };
};

const lastLines = (text: string, n = 40) => text.split('\n').slice(-n).join('\n');

/** A process group of its own, so stopping it stops every process the block started (npm, node, nats-server, …). */
const stopGroup = async (child: ChildProcess, graceMs = 20_000) => {
  const pgid = child.pid;
  if (pgid === undefined) return;
  const alive = () => {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false;
    }
  };
  if (!alive()) return;
  process.kill(-pgid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (alive() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  if (alive()) process.kill(-pgid, 'SIGKILL');
};

interface Background {
  block: ShellBlock;
  output(): string;
  ready(pattern: RegExp, timeoutMs: number): Promise<string | undefined>;
  stop(): Promise<void>;
}

const startBackground = (block: ShellBlock, text: string, cwd: string, env: NodeJS.ProcessEnv): Background => {
  const child = spawn('bash', ['-c', `set -eo pipefail\n${text}`], {
    cwd,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const take = (d: Buffer) => {
    out += d.toString();
    if (out.length > 2_000_000) out = out.slice(-1_000_000);
  };
  child.stdout.on('data', take);
  child.stderr.on('data', take);
  let exitCode: number | null | undefined;
  child.once('exit', (code, signal) => {
    exitCode = code ?? (signal ? 128 : null);
  });
  return {
    block,
    output: () => out,
    async ready(pattern, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        if (pattern.test(out)) return undefined;
        if (exitCode !== undefined) return `exited (${exitCode}) before it was ready`;
        if (Date.now() > deadline) return `not ready after ${timeoutMs / 1000} s (waiting for ${pattern})`;
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    stop: () => stopGroup(child),
  };
};

interface Session {
  run(block: ShellBlock, text: string, timeoutMs: number): Promise<{ code: number | null; printed: string }>;
  output(): string;
  stop(): Promise<void>;
}

/** One bash: the reader's terminal. Each block is sourced from a file (stdin /dev/null), then a marker says it ended. */
const startSession = (cwd: string, env: NodeJS.ProcessEnv): Session => {
  const child = spawn('bash', ['--noprofile', '--norc'], { cwd, env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    out += d.toString();
  });
  let exitCode: number | null | undefined;
  child.once('exit', (code, signal) => {
    exitCode = code ?? (signal ? 128 : null);
  });
  child.stdin.write('exec 2>&1\nset -eo pipefail\n');
  return {
    output: () => out,
    async run(block, text, timeoutMs) {
      const file = join(env.TMPDIR as string, `block-${block.n}.sh`);
      writeFileSync(file, `${text}\n`);
      const from = out.length;
      const marker = `__doc_block_${randomUUID()}__`;
      child.stdin.write(`source '${file}' </dev/null\necho "${marker}"\n`);
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const printed = out.slice(from);
        const end = printed.indexOf(marker);
        if (end >= 0) return { code: 0, printed: printed.slice(0, end) };
        if (exitCode !== undefined) return { code: exitCode, printed };
        if (Date.now() > deadline) return { code: null, printed };
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    stop: async () => {
      child.stdin.end();
      await stopGroup(child, 5_000);
    },
  };
};

const EXIT_HINTS: Record<number, string> = {
  22: 'curl was answered an HTTP error (its body is the last thing printed)',
  127: 'a command not found',
};

export interface DocRun {
  blocks: ShellBlock[];
  /** what each server block printed, by block number */
  serverOutput: Map<number, string>;
  ports: DocPorts;
}

export interface RunOptions {
  notRun: readonly NotRun[];
  serverTimeoutMs?: number;
  blockTimeoutMs?: number;
}

/**
 * A copy of the checkout, its ports, its reader's terminal and the servers its documents started, shared by the
 * documents run in it one after another: a document that continues another's walk-through (the service it started
 * still running, its variables still set) runs after it in the same sandbox, from the checkout's folder.
 */
export interface DocSandbox {
  run(t: Test, doc: string, options: RunOptions): Promise<DocRun>;
}

/** A sandbox for documents, removed (its session and every server stopped) when `t` ends. */
export const openDocSandbox = async (t: Test): Promise<DocSandbox> => {
  const sandbox = makeSandbox();
  const ports = await freeDocPorts();
  const env = readerEnv(sandbox, ports);
  const servers: Background[] = [];
  let session: Session | undefined;
  t.teardown(async () => {
    await session?.stop();
    await Promise.all(servers.map((s) => s.stop()));
    rmSync(sandbox.dir, { recursive: true, force: true });
  });
  const context = () =>
    Object.fromEntries(servers.map((s) => [`${where(s.block)} printed (last lines)`, lastLines(s.output(), 30)]));
  let docsRun = 0;

  /**
   * Runs one document's shell blocks in order (see the top of this file), one assertion per block, and stops at the
   * first that fails: the assertion names the document, the block and its line, and carries the block as run, what
   * it printed and the last lines of every server started before it. A document after the first starts in the
   * checkout's folder (the one before may have left the terminal in a `mktemp -d` folder).
   */
  const run = async (t: Test, doc: string, options: RunOptions): Promise<DocRun> => {
    const blocks = shellBlocks(doc, readFileSync(join(root, doc), 'utf8'));
    if (docsRun++ > 0 && session) {
      const back = await session.run({ doc, n: 0, line: 0, text: '' }, `cd '${sandbox.dir}'`, 5_000);
      t.equal(back.code, 0, `${doc}: the terminal back in the checkout`);
    }
    const serverOutput = new Map<number, string>();
    const started = Date.now();
    for (const block of blocks) {
      const skip = options.notRun.find((r) => r.doc === doc && block.text.trimStart().startsWith(r.starts));
      if (skip) {
        t.comment(`${where(block)}: not run: ${skip.why}`);
        continue;
      }
      const text = substitutePorts(block.text, ports);
      const kind = serverOf(block);
      const at = Date.now();
      if (kind) {
        const bg = startBackground(block, text, sandbox.dir, env);
        servers.push(bg);
        const problem = await bg.ready(kind.ready, options.serverTimeoutMs ?? 180_000);
        serverOutput.set(block.n, bg.output());
        t.notOk(
          problem,
          `${where(block)}: ${kind.name} ${problem ?? `ready in ${((Date.now() - at) / 1000).toFixed(1)} s`}`,
          {
            block: text,
            printed: lastLines(bg.output()),
            ...context(),
          },
        );
        if (problem) break;
        continue;
      }
      session ??= startSession(sandbox.dir, env);
      const timeoutMs = options.blockTimeoutMs ?? 120_000;
      const { code, printed } = await session.run(block, text, timeoutMs);
      const secs = ((Date.now() - at) / 1000).toFixed(1);
      const outcome =
        code === 0
          ? `ran in ${secs} s`
          : code === null
            ? `still running after ${timeoutMs / 1000} s (a poll that never ends, or a server not listed in SERVERS?)`
            : `exit ${code} after ${secs} s${EXIT_HINTS[code] ? `: ${EXIT_HINTS[code]}` : ''}`;
      t.equal(code, 0, `${where(block)}: ${outcome}`, { block: text, printed: lastLines(printed), ...context() });
      if (code !== 0) break;
    }
    for (const s of servers) if (s.block.doc === doc) serverOutput.set(s.block.n, s.output());
    t.comment(`${doc}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return { blocks, serverOutput, ports };
  };
  return { run };
};

/** Runs one document on its own, in a sandbox of its own (see `openDocSandbox`). */
export const runDocument = async (t: Test, doc: string, options: RunOptions): Promise<DocRun> =>
  (await openDocSandbox(t)).run(t, doc, options);

/** The not-run entries of `docs` that match no block: stale, so the test fails on them. */
export const staleNotRun = (notRun: readonly NotRun[], docs: readonly string[]): NotRun[] =>
  notRun.filter(
    (r) =>
      docs.includes(r.doc) &&
      !shellBlocks(r.doc, readFileSync(join(root, r.doc), 'utf8')).some((b) => b.text.trimStart().startsWith(r.starts)),
  );
