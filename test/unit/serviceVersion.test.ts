import { readFileSync } from 'node:fs';
import t from 'tap';
import { packageVersion } from '../../services/compose/version.js';

/** The version `/health` and the MCP server report (docs/operations.md): the package's own, read from the sources. */
t.test('service version › the package’s version', async (t) => {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  t.equal(packageVersion(), pkg.version, `package.json says ${pkg.version}`);
});
