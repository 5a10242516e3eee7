import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { resolve } from 'node:path';
import { UNPACED } from './service.js';

/**
 * `serve` of the build in `root` (`node bin/serp-api.js serve`, as `npm start` runs it) in a process of its own, for
 * the benchmarks that measure the service as shipped or compare two builds. `nodeArgs` are node flags for it alone.
 */
export const startBuiltService = async (
  root: string,
  dataDir: string,
  env: NodeJS.ProcessEnv,
  nodeArgs: readonly string[] = [],
): Promise<{ url: string; child: ChildProcess; kill(): Promise<void> }> => {
  const args = [...nodeArgs, resolve(root, 'bin/serp-api.js'), 'serve', '--port', '0', '--data', dataDir];
  const child = spawn(process.execPath, args, {
    cwd: resolve(root),
    env: { ...process.env, SERP_LOG_LEVEL: 'warn', SERP_FETCHER: 'http', ...UNPACED, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const kill = async () => {
    if (child.exitCode !== null) return;
    child.kill('SIGKILL');
    await once(child, 'exit');
  };
  let err = '';
  const url = await new Promise<string>((ok, fail) => {
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) ok(m[1]!);
    });
    child.once('exit', (code) => fail(new Error(`serve exited with ${code}: ${err}`)));
  }).catch(async (e) => {
    await kill();
    throw e;
  });
  return { url, child, kill };
};
