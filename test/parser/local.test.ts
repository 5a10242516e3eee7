import t from 'tap';
import { countOf } from '../../parser/features/blockCards.js';
import { parse } from '../../parser/index.js';
import { fixturesMissing, listSerpPages, readFixtureText } from '../support/fixtures.js';

type Place = Record<string, unknown>;

const placesOf = (file: string, interstitialOk = false): Place[] => {
  const out = parse(readFixtureText(file), { captureAio: false });
  if (out.kind !== 'serp') {
    if (interstitialOk) return [];
    throw new Error(out.detail);
  }
  return ((out.serp.serp_features.local_results as { places?: Place[] } | undefined)?.places ?? []) as Place[];
};

const missing = fixturesMissing();

t.test('local pack › each line of a place becomes its field', { skip: missing }, async (t) => {
  // 2023 desktop: the name is a heading beside the details block, not inside it (it used to come out as the
  // rating line, "4.1 (496) · $ · Pizza").
  t.match(placesOf('serp/bs-serp-parser-spider/desktop.html.gz')[0], {
    position: 1,
    title: 'Mad Mushroom Pizza',
    rating: 4.1,
    reviews: 496,
    price: '$',
    type: 'Pizza',
    address: '320 W State St',
    place_id: '17467096720232806444',
  });
  // 2021 desktop: "4.1(6.2K) · $$ · Electronics store" and "1717 Harrison St · (415) 626-9682", hours with U+22C5.
  t.match(placesOf('serp/serp-parser-zlurad/desktop/old/dell.html.gz')[0], {
    title: 'Best Buy',
    rating: 4.1,
    reviews: 6200,
    price: '$$',
    type: 'Electronics store',
    address: '1717 Harrison St',
    phone: '(415) 626-9682',
    hours: 'Open ⋅ Closes 9PM',
    extensions: ['Their website mentions dell xps 13'],
  });
  // Mobile: the summary has no type ("4.1(30) · $$"); it leads the address line ("Coffee shop · 55 S Van Ness Ave").
  t.match(placesOf('serp/serp-parser-zlurad/mobile/coffee.html.gz')[1], {
    title: 'Blue Bottle Coffee',
    rating: 4.1,
    reviews: 30,
    price: '$$',
    type: 'Coffee shop',
    address: '55 S Van Ness Ave',
  });
  // Croatian tablet page: "4,4 (1.802) · $$" — decimal comma, thousands dot.
  t.match(placesOf('serp/bs-serp-parser-spider/tablet.html.gz')[0], {
    title: 'L.A. Cafe',
    rating: 4.4,
    reviews: 1802,
    type: 'Veganska',
    address: '639 S Spring St',
  });
  // Russian 2022: unrated ("Нет отзывов · Магазин"), a mall line without digits before "2,9 км · пр-т Мира, 33 к1".
  const [podium] = placesOf('serp/kokoc-google-parser/2022-03-31-1.decoded.html.gz');
  t.match(podium, { title: 'Подиум', type: 'Магазин', distance: '2,9 км', address: 'пр-т Мира, 33 к1' });
  t.notOk(podium && 'rating' in podium, 'an unrated place has no rating');
});

t.test('local pack › invariants on every fixture page', { skip: missing }, async (t) => {
  let seen = 0;
  for (const page of missing ? [] : listSerpPages()) {
    for (const place of placesOf(page, true)) {
      seen++;
      const title = String(place.title);
      if (!title || /^\d[.,]\d\s*\(/.test(title)) t.fail(`${page}: title "${title}" is a rating line`);
      const rating = place.rating as number | undefined;
      if (rating !== undefined && !(rating >= 1 && rating <= 5)) t.fail(`${page}: rating ${rating}`);
      const reviews = place.reviews as number | undefined;
      if (reviews !== undefined && !Number.isInteger(reviews)) t.fail(`${page}: reviews ${reviews}`);
      for (const [k, v] of Object.entries(place)) if (v === '') t.fail(`${page}: empty ${k}`);
      if (place.type !== undefined && /^\p{Sc}/u.test(String(place.type))) t.fail(`${page}: type is a price`);
    }
  }
  t.ok(seen >= 40, `checked ${seen} places`);
});

t.test('review counts as pages write them', async (t) => {
  t.equal(countOf('6.2K'), 6200);
  t.equal(countOf('(2,3K)'), 2300);
  t.equal(countOf('1.802'), 1802, 'a dot groups thousands without K');
  t.equal(countOf('5,893'), 5893);
  t.equal(countOf('1 802'), 1802, 'a space groups thousands (fr, ru)');
  t.equal(countOf('12\u202f345'), 12345, 'so does a narrow no-break space');
  t.equal(countOf('2,3 mil'), undefined, 'words of the interface language are not guessed at');
});
