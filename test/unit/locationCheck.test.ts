import t from 'tap';
import type { LocationSource } from '../../contracts/result.js';
import { askedPlace, isWrongPlace, judgeLocation } from '../../services/geo/locationCheck.js';
import { createLocationResolver } from '../../services/geo/locations.js';
import { uuleForName, uuleForPoint } from '../../services/geo/uule.js';

/** The shipped geotargets, as the service reads them (docs/locations.md#the-check). */
const resolver = createLocationResolver();
const lookup = { resolve: (name: string) => resolver.resolveLocation(name) };
t.teardown(() => resolver.close());

const asked = (location: string) => askedPlace({}, resolver.resolveLocation(location)?.canonicalName, lookup);
const judge = (location: string, name: string | undefined, source: LocationSource = 'ip_address') =>
  judgeLocation(asked(location), name === undefined ? undefined : { name, source }, lookup);
const statusOf = (location: string, name: string) => judge(location, name).status;

t.test('location check › a city asked for', async (t) => {
  const austin = 'Austin, Texas, United States';
  t.same(judge(austin, 'Austin, Texas'), {
    status: 'matched',
    requested: 'Austin,Texas,United States',
    detectedPlace: 'Austin,Texas,United States',
  });
  t.equal(statusOf(austin, 'Austin, TX'), 'matched', 'a region by its abbreviation');
  t.equal(statusOf(austin, '78701, Austin, TX'), 'matched', 'a postal code before it');
  t.equal(statusOf(austin, 'Austin'), 'matched', 'the bare name');
  t.same(judge(austin, 'Texas'), {
    status: 'region_only',
    requested: 'Austin,Texas,United States',
    detectedPlace: 'Texas,United States',
  });
  t.equal(statusOf(austin, 'United States'), 'country_only');
  t.match(judge(austin, 'Chicago, Illinois'), {
    status: 'mismatched',
    detectedPlace: 'Chicago,Illinois,United States',
    reason: 'Google placed it in Chicago, Illinois',
  });
  t.equal(statusOf(austin, 'Dallas'), 'mismatched', 'a bare name is read in the asked country first');
  t.equal(statusOf(austin, 'Round Rock, Texas'), 'mismatched', 'a suburb that is a city of its own');
  t.equal(statusOf(austin, 'Frankfurt, Hessen'), 'mismatched', 'abroad, with its region');
  t.equal(statusOf(austin, 'São Paulo, State of São Paulo'), 'mismatched', 'accents the geotargets do not write');
  t.equal(statusOf(austin, 'Alger'), 'mismatched', 'a bare name is a place of the asked country first: Alger, Ohio');
  t.equal(statusOf(austin, 'Lombardy'), 'mismatched', 'abroad: a region is known by its bare name');
});

t.test('location check › what it cannot tell', async (t) => {
  const austin = 'Austin, Texas, United States';
  t.match(judge(austin, undefined), { status: 'unverified', reason: /does not say/ });
  t.match(
    judge('Algiers, Algeria', 'Hussein Dey, Alger'),
    { status: 'unverified', reason: /no place the geotargets know/ },
    'Algiers in French: "Alger" is only Alger, Ohio abroad',
  );
  t.match(judge(austin, 'Bavaria'), { status: 'mismatched' }, 'a region abroad by its bare name');
  t.match(
    judge('Algiers, Algeria', 'Alger'),
    { status: 'unverified', reason: /Alger,Ohio.*another language/ },
    'a bare city name found only abroad proves nothing',
  );
  t.match(judge(austin, '港区、東京都'), { status: 'unverified', reason: /no place the geotargets know/ });
  t.match(judge(austin, '94301'), { status: 'unverified', reason: /names no place/ });
  t.match(judge('Munich, Bavaria, Germany', 'München, Bayern'), { status: 'unverified' }, 'German names');
});

t.test('location check › a place inside, or around, the one asked for', async (t) => {
  t.equal(statusOf('New York, New York, United States', 'Lower Manhattan, New York, NY'), 'matched', 'a neighbourhood');
  t.equal(statusOf('Texas', 'Austin, Texas'), 'matched', 'a city of the region asked for');
  t.equal(statusOf('United States', '94301, Palo Alto, CA'), 'matched', 'a city of the country asked for');
  t.equal(statusOf('Brooklyn, New York, United States', 'Lower Manhattan, New York, NY'), 'unverified', 'both in NYC');
  t.equal(
    statusOf('Los Angeles, California, United States', 'Los Angeles, Kalifornija, Sjedinjene Američke Države'),
    'matched',
    'its own name, the rest in another language',
  );
  t.equal(statusOf('Sao Paulo, Brazil', 'São Paulo'), 'matched', 'accents aside');
});

t.test('location check › what was asked for', async (t) => {
  t.same(askedPlace({}, 'Austin,Texas,United States', lookup), {
    place: 'Austin,Texas,United States',
    countryCode: 'US',
  });
  t.same(askedPlace({ uule: uuleForName('Austin,Texas,United States') }, undefined, lookup), {
    place: 'Austin,Texas,United States',
    countryCode: 'US',
  });
  t.same(askedPlace({ uule: 'w+CAIQICISU2FuIEZyYW5jaXNjbywgVVNB' }, undefined, lookup), {
    place: 'San Francisco,California,United States',
    countryCode: 'US',
  });
  t.match(askedPlace({ uule: uuleForName('Nowhere At All') }, undefined, lookup), { unnamed: /do not know/ });
  t.match(askedPlace({ uule: uuleForPoint(30.2, -97.7) }, undefined, lookup), { unnamed: /coordinates/ });
  t.match(askedPlace({ lat: 30.2 }, undefined, lookup), { unnamed: /coordinates/ });
  t.match(askedPlace({ uule: 'w+CAQQCFISCS0EZSFH_RKIEe8boaiT4nXf' }, undefined, lookup), { unnamed: /no place/ });
  t.match(askedPlace({}, undefined, lookup), { unnamed: 'no location was asked for' });
  t.match(
    judgeLocation(askedPlace({}, undefined, lookup), { name: 'Austin, Texas', source: 'ip_address' }, lookup),
    { status: 'unverified', reason: 'no location was asked for' },
    'nothing asked: the line is reported, nothing judged',
  );
});

t.test('location check › the fixture pages asked for a place by uule were placed there', async (t) => {
  // serp-parser's pages (uule "San Francisco, USA"), WebSearcher-era tablet page (uule for Los Angeles)
  const sf = askedPlace({ uule: 'w+CAIQICISU2FuIEZyYW5jaXNjbywgVVNB' }, undefined, lookup);
  t.equal(judgeLocation(sf, { name: 'San Francisco, California', source: 'ip_address' }, lookup).status, 'matched');
  const sweden = askedPlace({ uule: 'w+CAIQICIGc3dlZGVu' }, undefined, lookup);
  t.equal(
    judgeLocation(sweden, { name: 'Sverige', source: 'ip_address' }, lookup).status,
    'unverified',
    'the country in Swedish',
  );
});

t.test('location check › wrong place: elsewhere, its region only, its country only', async (t) => {
  t.same(
    ['matched', 'mismatched', 'region_only', 'country_only', 'unverified', undefined].map((s) =>
      isWrongPlace(s as Parameters<typeof isWrongPlace>[0]),
    ),
    [false, true, true, true, false, false],
  );
});
