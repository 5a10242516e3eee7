import { createReadStream, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createGunzip } from 'node:zlib';
import Database from 'better-sqlite3';
import { COUNTRIES } from './countries.js';
import { mainLanguageHl } from './language.js';
import { uuleForName } from './uule.js';

/** A location as the crawler targets it. */
export interface ResolvedLocation {
  canonicalName: string;
  countryCode: string;
  gl: string;
  hl: string;
  uule: string;
}

export interface LocationResolver {
  /** undefined when the name is neither a country nor an imported geotarget */
  resolveLocation(name: string): ResolvedLocation | undefined;
  close(): void;
}

export const LOCATIONS_DB = 'geotargets.sqlite';

/** "Austin, Texas, United States" and "austin,texas,united states" both find "Austin,Texas,United States". */
const lookupKey = (name: string): string =>
  name
    .trim()
    .replace(/\s*,\s*/g, ',')
    .replace(/\s+/g, ' ')
    .toLowerCase();

const toResolved = (canonicalName: string, countryCode: string): ResolvedLocation => ({
  canonicalName,
  countryCode,
  gl: countryCode.toLowerCase(),
  hl: mainLanguageHl(countryCode),
  uule: uuleForName(canonicalName),
});

const countryByName = new Map(Object.entries(COUNTRIES).map(([code, [, name]]) => [lookupKey(name), code]));

/** Splits one CSV line (RFC 4180 quoting; Google's file has no line breaks inside fields). */
const csvFields = (line: string): string[] => {
  const out: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      out.push(field);
      field = '';
    } else field += c;
  }
  out.push(field);
  return out;
};

const EXPECTED_HEADER = ['Criteria ID', 'Name', 'Canonical Name', 'Parent ID', 'Country Code', 'Target Type', 'Status'];

/**
 * Loads a geotargets CSV in Google's layout (plain or .gz) into `{dataDir}/geotargets.sqlite`. The rows go into a new
 * table that replaces the old one in the same transaction, so a running resolver never sees half an import.
 */
export const importLocations = async (csvPath: string, dataDir: string): Promise<{ rows: number }> => {
  mkdirSync(dataDir, { recursive: true });
  const db = new Database(join(dataDir, LOCATIONS_DB));
  try {
    db.pragma('journal_mode = WAL');
    const input = createReadStream(csvPath);
    const lines = createInterface({
      input: csvPath.endsWith('.gz') ? input.pipe(createGunzip()) : input,
      crlfDelay: Infinity,
    });
    const rows: string[][] = [];
    let header: string[] | undefined;
    for await (const raw of lines) {
      const line = raw.replace(/^\uFEFF/, '');
      if (!line.trim()) continue;
      const fields = csvFields(line);
      if (!header) {
        header = fields;
        if (EXPECTED_HEADER.some((h, i) => header?.[i] !== h)) {
          throw new Error(`${csvPath}: not a Google geotargets CSV (header must be ${EXPECTED_HEADER.join(',')})`);
        }
        continue;
      }
      rows.push(fields);
    }
    const swap = db.transaction(() => {
      db.exec(`DROP TABLE IF EXISTS geotargets_new;
        CREATE TABLE geotargets_new (criteria_id INTEGER PRIMARY KEY, name TEXT NOT NULL, canonical_name TEXT NOT NULL,
          lookup_key TEXT NOT NULL, country_code TEXT NOT NULL, target_type TEXT NOT NULL, status TEXT NOT NULL)`);
      const insert = db.prepare('INSERT OR REPLACE INTO geotargets_new VALUES (?, ?, ?, ?, ?, ?, ?)');
      for (const [id, name, canonical, , country, type, status] of rows) {
        if (!id || !canonical || !country) continue;
        insert.run(
          Number(id),
          name ?? '',
          canonical,
          lookupKey(canonical),
          country.toUpperCase(),
          type ?? '',
          status ?? '',
        );
      }
      db.exec(`DROP TABLE IF EXISTS geotargets; ALTER TABLE geotargets_new RENAME TO geotargets;
        CREATE INDEX geotargets_lookup ON geotargets (lookup_key)`);
    });
    swap();
    return { rows: (db.prepare('SELECT count(*) AS n FROM geotargets').get() as { n: number }).n };
  } finally {
    db.close();
  }
};

/**
 * Resolves a `location` to Google's canonical name. Countries come from the built-in table; everything else from an
 * imported geotargets table when `dataDir` holds one. Active targets win over removed ones with the same name.
 */
export const createLocationResolver = (dataDir?: string): LocationResolver => {
  let db: Database.Database | undefined;
  let lookup: Database.Statement | undefined;
  if (dataDir) {
    try {
      db = new Database(join(dataDir, LOCATIONS_DB), { readonly: true, fileMustExist: true });
      lookup = db.prepare(
        `SELECT canonical_name AS canonicalName, country_code AS countryCode FROM geotargets
         WHERE lookup_key = ? ORDER BY status = 'Active' DESC, criteria_id LIMIT 1`,
      );
    } catch {
      // no import yet (or no table): countries still resolve
      db?.close();
      db = undefined;
    }
  }
  return {
    resolveLocation(name) {
      const key = lookupKey(name);
      if (!key) return undefined;
      const row = lookup?.get(key) as { canonicalName: string; countryCode: string } | undefined;
      if (row) return toResolved(row.canonicalName, row.countryCode);
      const code = countryByName.get(key);
      const country = code ? COUNTRIES[code] : undefined;
      return code && country ? toResolved(country[1], code) : undefined;
    },
    close() {
      db?.close();
    },
  };
};
