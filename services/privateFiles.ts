import { closeSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs';

/**
 * The data directory holds every customer's keywords, labels and results and the service's secrets: what the service
 * creates there is its user's alone (docs/security.md), directories 0700 and files 0600, whatever the umask. An
 * existing directory keeps its mode (the operator may share it on purpose); start-up says when others can read it.
 */
export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** `dir` and its missing parents, created 0700 */
export const privateDir = (dir: string): void => {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
};

/**
 * `path` created empty and 0600 when missing, before SQLite opens it: SQLite gives the files it adds beside a
 * database (`-wal`, `-shm`) the database file's mode, so they are 0600 too.
 */
export const privateFile = (path: string): void => {
  try {
    closeSync(openSync(path, 'wx', PRIVATE_FILE_MODE));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
};

/** The start-up warning for a data directory that exists and that other users may read, else undefined. */
export const exposedDataDir = (dir: string): string | undefined => {
  if (!existsSync(dir)) return undefined;
  const mode = statSync(dir).mode & 0o777;
  if ((mode & 0o077) === 0) return undefined;
  return `the data directory ${dir} is open to other users (mode ${mode.toString(8)}): it holds every customer's searches and the service's secrets; chmod 700 it`;
};
