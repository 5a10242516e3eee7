import { createReadStream, type Stats, statSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createGunzip } from 'node:zlib';
import Database from 'better-sqlite3';
import { privateDir, privateFile } from '../privateFiles.js';
import { COUNTRIES } from './countries.js';
import { type Geotarget, lookupKey, shippedGeotargets } from './geotargets.js';
import { mainLanguageHl } from './language.js';
import { createLocationMatcher, type LocationMatcher } from './resolve.js';
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
  /**
   * The place a `location` means, in any of the forms people and clients write (services/geo/resolve.ts,
   * docs/locations.md); undefined when it is none of them.
   */
  resolveLocation(name: string): ResolvedLocation | undefined;
  /** the closest places to a location that did not resolve, best first: what a 422 offers instead */
  suggestLocations(name: string, limit: number): string[];
  /** ranked search over the shipped geotargets (empty when the shipped file is missing); no query: the largest */
  searchLocations(query: string, limit: number): Geotarget[];
  /** a shipped geotarget by its Google id (Criteria ID) */
  locationById(id: number): Geotarget | undefined;
  close(): void;
}

export const LOCATIONS_DB = 'geotargets.sqlite';

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
 * The rows of a geotargets CSV in Google's layout (plain or .gz), in EXPECTED_HEADER's column order, header checked:
 * what `locations import` loads and what scripts/build-locations.ts turns into the shipped file.
 */
export const readGeotargetsCsv = async (csvPath: string): Promise<string[][]> => {
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
  return rows;
};

/**
 * Loads a geotargets CSV in Google's layout (plain or .gz) into `{dataDir}/geotargets.sqlite`. The rows go into a new
 * table that replaces the old one in the same transaction, so a running resolver never sees half an import.
 */
export const importLocations = async (csvPath: string, dataDir: string): Promise<{ rows: number }> => {
  const rows = await readGeotargetsCsv(csvPath);
  privateDir(dataDir);
  privateFile(join(dataDir, LOCATIONS_DB));
  const db = new Database(join(dataDir, LOCATIONS_DB));
  try {
    db.pragma('journal_mode = WAL');
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

export interface LocationResolverOptions {
  /** how often, at most, a lookup checks whether the import appeared or was replaced (default 1,000 ms) */
  recheckMs?: number;
  /** the clock behind `recheckMs` (tests) */
  now?: () => number;
}

/** What tells one geotargets file from its replacement: a new file (inode) or a rewrite (mtime, size). */
const identityOf = (st: Stats) => `${st.dev}:${st.ino}:${st.mtimeMs}:${st.size}`;

/**
 * Resolves a `location` to Google's canonical name: from an imported geotargets table when `dataDir` holds one (a
 * newer list than the product's), else from the geotargets shipped with the product (`data/geotargets.tsv.gz`), else
 * the built-in country table. Active targets win over removed ones with the same name.
 *
 * `serp-api locations import` may run while a service is up: at most once per `recheckMs` a lookup stats the file, so
 * an import that appears after start is opened, and a replaced file (new inode, or rewritten: mtime or size) is
 * reopened. An import in place is visible anyway (SQLite readers see each committed transaction). A file that
 * vanished keeps the open one answering until a new one is there.
 */
export const createLocationResolver = (dataDir?: string, options: LocationResolverOptions = {}): LocationResolver => {
  const file = dataDir ? join(dataDir, LOCATIONS_DB) : undefined;
  const recheckMs = options.recheckMs ?? 1_000;
  const clock = options.now ?? Date.now;
  let db: Database.Database | undefined;
  let lookup: Database.Statement | undefined;
  /** identity of the file `db` was opened on */
  let opened: string | undefined;
  let checkedAt = Number.NEGATIVE_INFINITY;
  let closed = false;

  const closeDb = () => {
    try {
      db?.close();
    } catch {
      // already unusable: nothing to release
    }
    db = undefined;
    lookup = undefined;
    opened = undefined;
  };

  const open = (path: string, identity: string) => {
    try {
      db = new Database(path, { readonly: true, fileMustExist: true });
      lookup = db.prepare(
        `SELECT canonical_name AS canonicalName, country_code AS countryCode FROM geotargets
         WHERE lookup_key = ? ORDER BY status = 'Active' DESC, criteria_id LIMIT 1`,
      );
      opened = identity;
    } catch {
      // not a finished import yet (no table): countries still resolve, and the next check tries again
      closeDb();
    }
  };

  /** Cheap and throttled: one stat per `recheckMs`, a reopen only when the file is new or changed. */
  const refresh = () => {
    if (!file || closed) return;
    const at = clock();
    if (at - checkedAt < recheckMs) return;
    checkedAt = at;
    let identity: string;
    try {
      identity = identityOf(statSync(file));
    } catch {
      return;
    }
    if (db && identity === opened) return;
    closeDb();
    open(file, identity);
  };

  let matcher: LocationMatcher | null | undefined;
  const shippedMatcher = (): LocationMatcher | null => {
    if (matcher !== undefined) return matcher;
    const index = shippedGeotargets();
    matcher = index ? createLocationMatcher(index) : null;
    return matcher;
  };

  refresh();
  return {
    resolveLocation(name) {
      const key = lookupKey(name);
      if (!key) return undefined;
      refresh();
      let row: { canonicalName: string; countryCode: string } | undefined;
      try {
        row = lookup?.get(key) as typeof row;
      } catch {
        // the file went bad under us (replaced mid-read, table gone): countries for now, reopen on the next lookup
        closeDb();
        checkedAt = Number.NEGATIVE_INFINITY;
      }
      if (row) return toResolved(row.canonicalName, row.countryCode);
      const target = shippedMatcher()?.resolve(name);
      if (target) return toResolved(target.canonicalName, target.countryCode);
      const code = countryByName.get(key);
      const country = code ? COUNTRIES[code] : undefined;
      return code && country ? toResolved(country[1], code) : undefined;
    },
    suggestLocations: (name, limit) => (shippedMatcher()?.suggest(name, limit) ?? []).map((t) => t.canonicalName),
    searchLocations: (query, limit) => {
      const index = shippedGeotargets();
      if (!index) return [];
      return query.trim() ? index.search(query, limit) : index.largest(limit);
    },
    locationById: (id) => shippedGeotargets()?.byId(id),
    close() {
      closed = true;
      closeDb();
    },
  };
};
