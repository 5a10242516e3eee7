import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const here = path.dirname(fileURLToPath(import.meta.url));

t.test('embedded adapters › idle timers never keep the process alive', async (t) => {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'idleAdaptersChild.ts')], {
    cwd: path.join(here, '..', '..'),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let stdout = '';
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
  });
  // Generous: tsx start-up on a loaded machine; the adapters' own timers are 60 s, so an exit well before that is theirs.
  const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.on('exit', (c, s) => resolve([c, s])),
  );
  clearTimeout(killer);
  t.equal(signal, null, 'exited on its own, not killed');
  t.equal(code, 0, 'exit code 0');
  t.same(JSON.parse(stdout), { delivered: true, seen: 1 }, 'the adapters were really working before the exit');
});
