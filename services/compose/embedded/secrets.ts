import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

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
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, 'secrets.json');
  const stored: Partial<Secrets> = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
  const make = () => randomBytes(32).toString('base64url');
  const onDisk: Secrets = {
    keyPepper: stored.keyPepper ?? make(),
    linkSecret: stored.linkSecret ?? make(),
    adminToken: stored.adminToken ?? `adm_${make()}`,
  };
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
