import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, MIN_SECRET_LENGTH } from '../../config/config.js';
import { privateDir } from '../../privateFiles.js';

export interface Secrets {
  keyPepper: string;
  linkSecret: string;
  adminToken: string;
}

/**
 * Embedded mode creates its secrets on first start and keeps them in the data directory (mode 0600);
 * environment values win. `created` is true when the admin token was made now, so it can be printed once.
 */
export const loadOrCreateSecrets = (
  dataDir: string,
  fromEnv: Partial<Secrets>,
): { secrets: Secrets; createdAdminToken: boolean } => {
  privateDir(dataDir);
  const file = join(dataDir, 'secrets.json');
  const stored: Partial<Secrets> = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
  const make = () => randomBytes(32).toString('base64url');
  const onDisk: Secrets = {
    keyPepper: stored.keyPepper ?? make(),
    linkSecret: stored.linkSecret ?? make(),
    adminToken: stored.adminToken ?? `adm_${make()}`,
  };
  // an edited secrets.json is held to what the environment is held to
  const short = (['keyPepper', 'linkSecret', 'adminToken'] as const).filter(
    (k) => stored[k] !== undefined && (typeof stored[k] !== 'string' || stored[k].length < MIN_SECRET_LENGTH),
  );
  if (short.length > 0) {
    throw new ConfigError(short.map((k) => `${file}: ${k} must be at least ${MIN_SECRET_LENGTH} characters`));
  }
  const createdAdminToken = !stored.adminToken && !fromEnv.adminToken;
  if (!stored.keyPepper || !stored.linkSecret || !stored.adminToken) {
    writeFileSync(file, `${JSON.stringify(onDisk, null, 2)}\n`, { mode: 0o600 });
  }
  return {
    secrets: {
      keyPepper: fromEnv.keyPepper ?? onDisk.keyPepper,
      linkSecret: fromEnv.linkSecret ?? onDisk.linkSecret,
      adminToken: fromEnv.adminToken ?? onDisk.adminToken,
    },
    createdAdminToken,
  };
};
