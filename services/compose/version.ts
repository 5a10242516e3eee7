import { existsSync, readFileSync } from 'node:fs';

/** The package's version, from the sources (services/compose) or the build (dist/services/compose). */
export const packageVersion = (): string => {
  for (const up of ['../../package.json', '../../../package.json']) {
    const url = new URL(up, import.meta.url);
    if (existsSync(url)) return (JSON.parse(readFileSync(url, 'utf8')) as { version: string }).version;
  }
  return '0.0.0';
};
