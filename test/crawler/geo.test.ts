import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import t from 'tap';
import { registerLocationsCommand } from '../../services/cli/commands/locations.js';
import { buildGoogleUrl } from '../../services/crawler/googleUrl.js';
import { createTargetingResolver } from '../../services/crawler/targeting.js';
import { mainLanguageHl } from '../../services/geo/language.js';
import { createLocationResolver, importLocations, LOCATIONS_DB } from '../../services/geo/locations.js';
import { decodeUule, uuleForName, uuleForPoint } from '../../services/geo/uule.js';
import { jobFor } from '../support/crawlerHarness.js';
import { fixturesDir, fixturesMissing } from '../support/fixtures.js';

const decode = (uule: string) => Buffer.from(uule.slice(2), 'base64');

t.test('uule', async (t) => {
  t.test('w+ form: protobuf {1: 2, 2: 32, 4: name}', async (t) => {
    t.equal(uuleForName('Austin,Texas,United States'), 'w+CAIQICIaQXVzdGluLFRleGFzLFVuaXRlZCBTdGF0ZXM=');
    const bytes = decode(uuleForName('Austin,Texas,United States'));
    t.same([...bytes.subarray(0, 6)], [0x08, 0x02, 0x10, 0x20, 0x22, 26]);
  });

  t.test('names over 127 UTF-8 bytes take two length bytes', async (t) => {
    const name = `${'Ä'.repeat(70)},Germany`; // 148 bytes
    const bytes = decode(uuleForName(name));
    t.same([...bytes.subarray(4, 7)], [0x22, 0x94, 0x01], 'varint 148 = 0x94 0x01');
    t.equal(bytes.subarray(7).toString('utf8'), name);
  });

  t.test('a+ form carries lat/lon in 1e-7 degrees and the radius', async (t) => {
    const text = decode(uuleForPoint(30.2672, -97.7431, 500, 1)).toString('utf8');
    t.match(text, /latitude_e7:302672000\nlongitude_e7:-977431000/);
    t.match(text, /radius:500000/);
  });

  t.test('read back: what we write, what clients and Google write, and what cannot be read', async (t) => {
    t.same(decodeUule(uuleForName('Austin,Texas,United States')), { form: 'name', name: 'Austin,Texas,United States' });
    const long = `${'Ä'.repeat(70)},Germany`;
    t.same(decodeUule(uuleForName(long)), { form: 'name', name: long }, 'a two-byte length');
    t.same(decodeUule('w+CAIQICISU2FuIEZyYW5jaXNjbywgVVNB'), { form: 'name', name: 'San Francisco, USA' }, 'unpadded');
    t.same(decodeUule('w CAIQICIGc3dlZGVu'), { form: 'name', name: 'sweden' }, 'a + that arrived as a space');
    t.same(decodeUule('w+CAQQCFISCS0EZSFH_RKIEe8boaiT4nXf'), { form: 'encoded' }, 'a place by id, URL-safe base64');
    t.same(decodeUule(uuleForPoint(30.2672, -97.7431, 500, 1)), {
      form: 'point',
      lat: 30.2672,
      lon: -97.7431,
      radius: 500,
    });
    for (const bad of ['w+abc', 'hello', 'w+', 'w+!!!', 'a+aGVsbG8=', 'x+CAIQICIGc3dlZGVu', 'w+CAIQICIk'])
      t.equal(decodeUule(bad), undefined, bad);
  });
});

t.test('mainLanguageHl uses CLDR territory data with Google hl names', async (t) => {
  t.same(['US', 'DE', 'CH', 'BR', 'PT', 'TW', 'CN', 'IL', 'PH'].map(mainLanguageHl), [
    'en',
    'de',
    'de',
    'pt-br',
    'pt-pt',
    'zh-tw',
    'zh-cn',
    'iw',
    'tl',
  ]);
});

t.test('countries and shipped geotargets resolve without any import', async (t) => {
  const resolver = createLocationResolver();
  const de = resolver.resolveLocation(' germany ');
  t.same(de, { canonicalName: 'Germany', countryCode: 'DE', gl: 'de', hl: 'de', uule: uuleForName('Germany') });
  t.equal(
    resolver.resolveLocation('Austin, Texas, United States')?.canonicalName,
    'Austin,Texas,United States',
    'cities resolve from the geotargets shipped with the product, without an import',
  );
  t.equal(resolver.resolveLocation('Zzyzx Flats, Texas, United States'), undefined, 'a place that is not a target');
});

t.test('geotargets import', { skip: fixturesMissing('geo') }, async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'serp-geo-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const program = new Command().exitOverride();
  registerLocationsCommand(program);
  const logs: string[] = [];
  const log = console.log;
  console.log = (m: string) => logs.push(m);
  try {
    await program.parseAsync(
      ['locations', 'import', join(fixturesDir, 'geo', 'geotargets.csv.gz'), '--data', dataDir],
      {
        from: 'user',
      },
    );
  } finally {
    console.log = log;
  }
  t.match(logs[0], /imported \d{5} geotargets/, 'serp-api locations import FILE --data DIR');
  const resolver = createLocationResolver(dataDir);
  t.teardown(() => resolver.close());

  t.test('"Austin, Texas, United States" gives the expected uule, gl=us, hl=en', async (t) => {
    t.same(resolver.resolveLocation('Austin, Texas, United States'), {
      canonicalName: 'Austin,Texas,United States',
      countryCode: 'US',
      gl: 'us',
      hl: 'en',
      uule: 'w+CAIQICIaQXVzdGluLFRleGFzLFVuaXRlZCBTdGF0ZXM=',
    });
  });

  t.test('an unknown location resolves to nothing, and a crawl refuses it', async (t) => {
    t.equal(resolver.resolveLocation('Atlantis, Nowhere'), undefined);
    const targeting = createTargetingResolver(resolver);
    t.throws(() => targeting(jobFor({ keyword: 'x', location: 'Atlantis, Nowhere' }).request), /unknown location/);
  });

  t.test('the targeting goes into the Google URL; explicit gl/hl win', async (t) => {
    const targeting = createTargetingResolver(resolver);
    const request = jobFor({
      keyword: 'coffee',
      location: 'Munich,Bavaria,Germany',
      hl: 'en',
      tbs: 'qdr:d',
      safe: 'active',
    }).request;
    const url = new URL(
      buildGoogleUrl(request, { origin: 'https://www.google.de', start: 10, targeting: targeting(request) }),
    );
    t.equal(url.searchParams.get('gl'), 'de');
    t.equal(url.searchParams.get('hl'), 'en', 'the request hl overrides the country language');
    t.equal(url.searchParams.get('uule'), uuleForName('Munich,Bavaria,Germany'));
    t.equal(url.searchParams.get('tbs'), 'qdr:d');
    t.equal(url.searchParams.get('safe'), 'active');
    t.equal(url.searchParams.get('start'), '10');
    t.equal(url.searchParams.get('num'), null, 'num is never sent');
  });

  t.test('re-importing replaces the table', async (t) => {
    const again = await importLocations(join(fixturesDir, 'geo', 'geotargets.csv.gz'), dataDir);
    t.ok(again.rows > 50_000);
    t.equal(resolver.resolveLocation('Austin,Texas,United States')?.gl, 'us');
  });
});

/** A geotargets CSV in Google's layout with the given rows: [id, canonical name, country]. */
const csvOf = (rows: Array<[number, string, string]>) =>
  [
    'Criteria ID,Name,Canonical Name,Parent ID,Country Code,Target Type,Status',
    ...rows.map(
      ([id, canonical, country]) => `${id},"${canonical.split(',')[0]}","${canonical}",,${country},City,Active`,
    ),
  ].join('\n');

t.test('a running resolver picks up an import made after it started, and a replaced file', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'serp-geo-live-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  // made-up places: real ones would resolve from the geotargets shipped with the product whatever the import does
  const csv = async (name: string, rows: Array<[number, string, string]>) => {
    const path = join(dataDir, name);
    await writeFile(path, csvOf(rows));
    return path;
  };
  const first = await csv('first.csv', [[1026201, 'Zzyzx Flats,Texas,United States', 'US']]);
  const second = await csv('second.csv', [[1004074, 'Nowhere Alm,Bavaria,Germany', 'DE']]);
  let now = 1_000_000;
  const resolver = createLocationResolver(dataDir, { now: () => now });
  t.teardown(() => resolver.close());
  const austin = () => resolver.resolveLocation('Zzyzx Flats, Texas, United States')?.canonicalName;
  const munich = () => resolver.resolveLocation('Nowhere Alm, Bavaria, Germany')?.canonicalName;

  t.equal(austin(), undefined, 'no import yet');
  t.equal(resolver.resolveLocation('Germany')?.gl, 'de', 'countries resolve meanwhile');

  await importLocations(first, dataDir);
  now += 500;
  t.equal(austin(), undefined, 'the file is checked at most once a second');
  now += 500;
  t.equal(austin(), 'Zzyzx Flats,Texas,United States', 'a second later the new import is opened, without a restart');

  // re-import in place: SQLite readers see the committed swap, whatever the clock
  await importLocations(second, dataDir);
  t.equal(munich(), 'Nowhere Alm,Bavaria,Germany', 'a re-import replaces the table');
  t.equal(austin(), undefined, 'rows of the earlier import are gone');

  // the file itself replaced: removed and imported afresh (a new inode)
  for (const suffix of ['', '-wal', '-shm']) await rm(join(dataDir, `${LOCATIONS_DB}${suffix}`), { force: true });
  await importLocations(first, dataDir);
  now += 1_000;
  t.equal(austin(), 'Zzyzx Flats,Texas,United States', 'the new file is opened');
  t.equal(munich(), undefined, 'and the old one no longer answers');

  // a file that is not (yet) a finished import is not a failure: countries resolve, the next check retries
  for (const suffix of ['', '-wal', '-shm']) await rm(join(dataDir, `${LOCATIONS_DB}${suffix}`), { force: true });
  await writeFile(join(dataDir, LOCATIONS_DB), '');
  now += 1_000;
  t.equal(austin(), undefined, 'an empty file has no geotargets');
  t.equal(resolver.resolveLocation('United States')?.gl, 'us');
  await rm(join(dataDir, LOCATIONS_DB), { force: true });
  await importLocations(second, dataDir);
  now += 1_000;
  t.equal(munich(), 'Nowhere Alm,Bavaria,Germany', 'and the import after it is picked up');

  resolver.close();
  now += 1_000;
  t.equal(munich(), undefined, 'a closed resolver opens nothing again');
});
