import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import type { DetectedLocation } from '../../contracts/result.js';
import { parse, toCompat } from '../../parser/index.js';
import { sourceOf } from '../../parser/location.js';
import { fixturesMissing, listSerpPages, readFixtureText } from '../support/fixtures.js';

/**
 * Where Google says it placed each fixture page (docs/locations.md#where-google-placed-a-search). The expected file
 * was written from the parser's output once, then every entry was checked by hand against the page's own footer
 * (the line in the markup, in the script that fills the footer, or in the 2021–22 settings object); `null` marks a
 * page that holds no such line (checked the same way: no place and no phrase anywhere in it).
 */
const here = dirname(fileURLToPath(import.meta.url));
const expected = JSON.parse(readFileSync(join(here, 'expected', 'detectedLocation.json'), 'utf8')) as Record<
  string,
  DetectedLocation | null
>;

const detectedIn = (html: string) => {
  const out = parse(html, { captureAio: false });
  return out.kind === 'serp' ? out.serp.information.detected_location : undefined;
};

t.test('detected location › on the fixture pages', { skip: fixturesMissing() }, async (t) => {
  const pages = listSerpPages()
    .map((p) => ({ path: p, rel: p.replace(/^serp\//, ''), html: readFixtureText(p) }))
    .filter((p) => parse(p.html, { captureAio: false }).kind === 'serp');
  const withLine = pages.filter((p) => expected[p.rel]);
  const without = pages.filter((p) => expected[p.rel] === null);

  t.test('every result page has an expected entry (a new fixture page is checked by hand first)', async (t) => {
    t.same(
      pages.filter((p) => !(p.rel in expected)).map((p) => p.rel),
      [],
    );
  });

  t.test('the line is read right on every page that carries it', async (t) => {
    const wrong = withLine.flatMap((p) => {
      const got = detectedIn(p.html);
      return JSON.stringify(got) === JSON.stringify(expected[p.rel])
        ? []
        : [{ page: p.rel, got, want: expected[p.rel] }];
    });
    t.same(wrong, []);
    console.log(
      `# detected_location right on ${withLine.length - wrong.length} of ${withLine.length} pages with a line`,
    );
    t.ok(withLine.length >= 40, `${withLine.length} pages carry the line`);
  });

  t.test('no place is invented on a page without the line', async (t) => {
    const invented = without.flatMap((p) => {
      const got = detectedIn(p.html);
      return got ? [{ page: p.rel, got }] : [];
    });
    t.same(invented, []);
    console.log(`# ${invented.length} invented on ${without.length} pages without a line`);
  });

  t.test('the forms are all among them: markup, footer script, basic page, 2021–22 settings', async (t) => {
    const of = (rel: string) => expected[rel];
    t.same(of('serp-parser-zlurad/desktop/paris.html.gz'), { name: 'San Francisco, California', source: 'ip_address' });
    t.same(of('websearcher/2024-03-13_cistern_81f344a9684a.html.gz'), {
      name: 'United States',
      source: 'ip_address',
    });
    t.same(of('juremrzek-google-scraper/sushi.html.gz'), { name: 'Dutovlje', source: 'past_activity' });
    t.same(of('debug-dumps-2025-2026/roig_2024-11-20_alquiler-vehiculos-mallorca_en-ES.html.gz'), {
      name: '28046, Madrid',
      source: 'precise',
    });
    t.same(of('debug-dumps-2025-2026/balajipharma_2025-12_cipla-logo_basic-images-wap_en-IN.html.gz'), {
      name: '324008, Kota, Rajasthan',
      source: 'ip_address',
    });
    t.same(of('serp-parser-zlurad/mobile/old/paris.html.gz'), {
      name: 'San Francisco, California',
      source: 'ip_address',
    });
    t.same(of('kokoc-google-parser/2022-03-31-1.decoded.html.gz'), { name: '109012, Москва', source: 'precise' });
    // "Unknown - Can't determine location": Google placed it nowhere
    t.equal(of('serp-parser-zlurad/nojs/coffee-nojs.html.gz'), null);
  });

  t.test('compat keeps it under search_information (a field of ours)', async (t) => {
    const page = pages.find((p) => p.rel === 'serp-parser-zlurad/desktop/paris.html.gz');
    const out = page ? parse(page.html, { captureAio: false }) : undefined;
    if (out?.kind !== 'serp') return t.fail('the page parses');
    const compat = toCompat({
      search_metadata: {
        id: '0123456789abcdef01234567',
        status: 'done',
        cached: false,
        created_at: '2026-01-02T03:04:05.678Z',
        parameters: { keyword: 'paris' },
        information: out.serp.information,
      },
      organic_results: out.serp.organic_results,
      serp_features: out.serp.serp_features,
    });
    t.same((compat.search_information as Record<string, unknown>).detected_location, {
      name: 'San Francisco, California',
      source: 'ip_address',
    });
  });
});

/** A result page as small as the parser reads one: a result, and the footer given. */
const page = (footer: string, script = '') =>
  `<html><head><title>q - Google Search</title><style>.unknown_loc{background:#70757a}</style></head><body>
<div id="rso"><div class="g"><a href="https://a.example/"><h3>A</h3></a></div></div>${footer}${script}</body></html>`;

t.test('detected location › markup written by hand', async (t) => {
  t.test('the line with its phrase', async (t) => {
    const html = page(
      '<div id="swml"><a href="#"><div><span class="EYqSq unknown_loc"></span><span class="dfB0uf">Austin, TX</span></div><div><span>&nbsp;-&nbsp;</span><span class="KwU3F"><span>Based on your places (Home)</span></span></div></a> - <update-location>Update location</update-location></div>',
    );
    t.same(detectedIn(html), { name: 'Austin, TX', source: 'places' });
  });

  t.test('the device icon without a phrase read: precise', async (t) => {
    const html = page(
      '<div><a href="#"><div><span class="known_loc"></span><span>Austin, TX</span></div><div><span>Standort des Geräts</span></div></a></div>',
    );
    t.same(detectedIn(html), { name: 'Austin, TX', source: 'precise' });
  });

  t.test('a phrase in a language not read is unknown, never guessed', async (t) => {
    const html = page(
      '<div><a href="#"><div><span class="unknown_loc"></span><span>Wien</span></div><div><span>Ortsangabe</span></div></a> - <update-location>Standort aktualisieren</update-location></div>',
    );
    t.same(detectedIn(html), { name: 'Wien', source: 'unknown' });
  });

  t.test('only in the footer script, escaped', async (t) => {
    const markup =
      '\\x3cdiv\\x3e\\x3ca href\\x3d\\x22#\\x22\\x3e\\x3cdiv\\x3e\\x3cspan class\\x3d\\x22EYqSq unknown_loc\\x22\\x3e\\x3c/span\\x3e\\x3cspan\\x3eS\\u00e3o Paulo\\x3c/span\\x3e\\x3c/div\\x3e\\x3cspan\\x3eDo seu endere\\u00e7o IP\\x3c/span\\x3e\\x3c/a\\x3e\\x3c/div\\x3e';
    t.same(detectedIn(page('<div id="fbar"></div>', `<script>window.jsl.dh('fbar','${markup}');</script>`)), {
      name: 'São Paulo',
      source: 'ip_address',
    });
    t.same(
      detectedIn(page('<div id="x"></div>', `<script>(function(){jsl.dh(this.id,"${markup}")})()</script>`)),
      { name: 'São Paulo', source: 'ip_address' },
      'filled by `jsl.dh(this.id, …)`',
    );
  });

  t.test('the class in a style sheet or in other script text is no line', async (t) => {
    t.equal(detectedIn(page('')), undefined);
    t.equal(
      detectedIn(page('', '<script>var a = "<span class=\\"unknown_loc\\"></span><span>Paris</span>";</script>')),
      undefined,
    );
    t.equal(detectedIn(page('<div><span class="unknown_loc"></span><span> </span></div>')), undefined, 'no place');
  });

  t.test('a page full of markers is read in time that grows with its bytes', async (t) => {
    const call = `<script>jsl.dh('x','${'\\x3cspan class\\x3d\\x22unknown_loc\\x22\\x3e\\x3c/span\\x3e'.repeat(20_000)}');</script>`;
    const stray = `<script>var a="${'unknown_loc uul_text '.repeat(100_000)}";</script>`;
    for (const [name, html] of [
      ['one call holding them all', page('', call)],
      ['in no call at all', page('', stray)],
    ] as const) {
      const started = performance.now();
      t.equal(detectedIn(html), undefined, name);
      const ms = performance.now() - started;
      t.ok(ms < 5_000, `${name}: ${html.length} bytes in ${ms.toFixed(0)} ms`);
    }
  });

  t.test('"Unknown - Can\'t determine location" is no place', async (t) => {
    const html = page(
      '<div class="Srfpq"><div><span class="unknown_loc"></span><span>Unknown</span></div><span>Can\'t determine location</span> - <a href="/url?q=https://support.google.com/websearch%3Fp%3Dws_settings_location">Learn more</a></div>',
    );
    t.equal(detectedIn(html), undefined);
  });

  t.test('the phrase → source, in the languages seen', async (t) => {
    t.same(
      [
        'From your IP address',
        'From your Internet address',
        'D’après votre adresse IP',
        'ソース: あなたの IP アドレス',
        'จากที่อยู่ IP ของคุณ',
        'Based on your past activity',
        'Based on your places (Home)',
        'From your device',
        'С вашего устройства',
        'Update location',
        undefined,
      ].map(sourceOf),
      [
        'ip_address',
        'ip_address',
        'ip_address',
        'ip_address',
        'ip_address',
        'past_activity',
        'places',
        'precise',
        'precise',
        'unknown',
        'unknown',
      ],
    );
    t.equal(sourceOf('Zip code'), 'unknown', '"ip" inside a word is not IP');
  });
});
