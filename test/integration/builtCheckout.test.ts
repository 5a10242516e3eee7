import { execFile } from 'node:child_process';
import { copyFileSync, cpSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import t from 'tap';
import { checkoutRoot } from '../../services/cli/dev/cluster.js';
import { buildInto } from '../support/service.js';

const run = promisify(execFile);
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * `npm start` builds into dist/, and `npm run cluster` then runs the built CLI, whose modules sit a folder deeper
 * than the sources: the checkout's root (where bin/serp-api.js is, which the cluster starts its roles with) must be
 * found from there too. Built into a temporary folder laid out as a checkout, so the real dist/ is not touched.
 */
t.test('the cluster finds the checkout from the sources and from the build', async (t) => {
  t.equal(realpathSync(checkoutRoot()), realpathSync(root), 'from the sources');

  const pkg = mkdtempSync(join(tmpdir(), 'serp-checkout-'));
  t.teardown(() => rmSync(pkg, { recursive: true, force: true }));
  await buildInto(join(pkg, 'dist'));
  copyFileSync(join(root, 'package.json'), join(pkg, 'package.json'));
  cpSync(join(root, 'bin'), join(pkg, 'bin'), { recursive: true });
  symlinkSync(join(root, 'node_modules'), join(pkg, 'node_modules'), 'dir');

  const built = pathToFileURL(join(pkg, 'dist', 'services', 'cli', 'dev', 'cluster.js')).href;
  const { checkoutRoot: builtRoot } = (await import(built)) as typeof import('../../services/cli/dev/cluster.js');
  t.equal(realpathSync(builtRoot()), realpathSync(pkg), 'from dist/: the folder above it, which holds bin/');
  // what `npm run cluster` runs: the built CLI answers from that checkout
  const { stdout } = await run(process.execPath, [join(pkg, 'bin', 'serp-api.js'), 'cluster', 'up', '--help']);
  t.match(stdout, /three nats-server nodes/, 'the built CLI runs');
  t.throws(() => checkoutRoot(pathToFileURL(join(tmpdir(), 'a', 'b', 'c.js'))), /not inside a checkout/);
});
