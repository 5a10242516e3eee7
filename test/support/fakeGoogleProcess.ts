import { spawn } from 'node:child_process';
import { once } from 'node:events';

/**
 * The fake Google origin in a process of its own (`scripts/fake-google.ts`), as Google would be: for benchmarks,
 * whose own event loop must not serve the pages it is timing the service against. `args` are the script's own
 * options (`--adversary`, `--proxies 4`, …).
 */
export const startFakeGoogleProcess = async (latencyMs: number, args: readonly string[] = []) => {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'scripts/fake-google.ts', '--port', '0', '--latency', String(latencyMs), '--json', ...args],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const [line] = (await once(child.stdout, 'data')) as [Buffer];
  child.stdout.resume();
  const { origin, proxies } = JSON.parse(line.toString().trim().split('\n')[0]!) as {
    origin: string;
    proxies: string[];
  };
  return {
    origin,
    proxies,
    close: async () => {
      child.kill('SIGTERM');
      if (child.exitCode === null) await once(child, 'exit');
    },
  };
};
