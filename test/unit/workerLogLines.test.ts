import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import t from 'tap';

/**
 * The workers' log lines (docs/operations.md#metrics-and-logs): the same JSON shape as the HTTP logs (pino's), one
 * line each on stdout, at `info`, and none where SERP_LOG_LEVEL asks for less. Written to stdout, so each case runs in
 * a process of its own and reads what it printed.
 */
const logLines = new URL('../../services/compose/logLines.ts', import.meta.url).pathname;
const run = promisify(execFile);

const printed = async (level: string, enabled = true) => {
  const code = `import(${JSON.stringify(logLines)}).then(({ jsonLines }) => {
    const log = jsonLines(${JSON.stringify(level)}, ${enabled});
    if (log) { log('crawl done', { jobId: 'j1' }); log('second'); } else process.stdout.write('off');
  });`;
  const { stdout } = await run(process.execPath, ['--import', 'tsx', '-e', code]);
  return stdout;
};

t.test('worker log lines', async (t) => {
  const lines = (await printed('info')).trim().split('\n');
  t.equal(lines.length, 2, 'one line a message');
  const first = JSON.parse(lines[0]) as Record<string, unknown>;
  t.match(first, { level: 30, msg: 'crawl done', jobId: 'j1' }, 'pino’s level number, the message and its fields');
  t.type(first.time, 'number', 'with the time');
  t.type(first.pid, 'number', 'and the process');
  t.equal((await printed('debug')).trim().split('\n').length, 2, 'a lower threshold keeps them');
  t.equal(await printed('warn'), 'off', 'at warn the workers say nothing');
  t.equal(await printed('silent'), 'off', 'nor when silent');
  t.equal(await printed('info', false), 'off', 'nor where the service’s logger is off');
});
