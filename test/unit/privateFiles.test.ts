import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { exposedDataDir, privateDir, privateFile } from '../../services/privateFiles.js';

/**
 * The data directory is its user's alone (docs/security.md): what the service creates there is 0700 and 0600 whatever
 * the umask, what exists keeps its mode, and start-up says when others can read the folder.
 */
const modeOf = (path: string) => statSync(path).mode & 0o777;

t.test('private files', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'serp-private-'));
  const umask = process.umask(0o002);
  t.teardown(() => {
    process.umask(umask);
    rmSync(root, { recursive: true, force: true });
  });

  const data = join(root, 'a', 'data');
  privateDir(data);
  t.equal(modeOf(data), 0o700, 'a new data folder is 0700 under a permissive umask');
  t.equal(exposedDataDir(data), undefined, 'and start-up has nothing to say about it');

  const db = join(data, 'events.db');
  privateFile(db);
  t.equal(modeOf(db), 0o600, 'a new database file is 0600');
  writeFileSync(db, 'kept');
  privateFile(db);
  t.equal(statSync(db).size, 4, 'an existing file is left as it is');

  const shared = join(root, 'shared');
  mkdirSync(shared, { mode: 0o755 });
  privateDir(shared);
  t.equal(modeOf(shared), 0o755, 'an existing folder keeps the mode its operator gave it');
  t.match(
    exposedDataDir(shared),
    /is open to other users \(mode 755\).*chmod 700 it$/,
    'and start-up says so, and what to do',
  );
  t.equal(exposedDataDir(join(root, 'missing')), undefined, 'a folder not made yet is no warning');
});
