import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { PARSER_VERSION } from '../../parser/index.js';
import { fixturesDir, fixturesMissing, readFixtureText } from '../support/fixtures.js';
import { cliResult, removeDir, tempDataDir } from '../support/service.js';

const missing = fixturesMissing();
const PAGE = 'serp/websearcher/2024-03-13_define-judgement_4f4d0fed0592.html.gz';

t.test('serp-api parse FILE', { skip: missing }, async (t) => {
  const dir = tempDataDir('cli-parse');
  t.teardown(() => removeDir(dir));
  const gz = join(fixturesDir, PAGE);

  // A saved page, gzipped: the native result.
  const native = await cliResult(['parse', gz]);
  t.equal(native.code, 0, native.stderr);
  const result = JSON.parse(native.stdout) as {
    search_metadata: { parser_version?: string };
    organic_results: Array<{ position: number; link: string }>;
    serp_features: { answer_box?: { type: string } };
  };
  t.equal(result.search_metadata.parser_version, PARSER_VERSION, 'the parser version is in the result');
  t.equal(result.organic_results.length, 10, 'ten organic results');
  t.same(
    result.organic_results.map((r) => r.position),
    [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
  );
  t.equal(result.serp_features.answer_box?.type, 'dictionary_results');

  // The same page as plain .html, in SerpApi's names.
  const html = join(dir, 'page.html');
  writeFileSync(html, readFixtureText(PAGE));
  const compat = await cliResult(['parse', html, '--output', 'compat']);
  t.equal(compat.code, 0, compat.stderr);
  const serpapi = JSON.parse(compat.stdout) as Record<string, unknown>;
  t.match(serpapi, {
    search_information: { organic_results_state: 'Results for exact spelling' },
    answer_box: { type: 'dictionary_results', syllables: 'judg·ment' },
  });
  t.equal((serpapi.organic_results as unknown[]).length, 10);

  // What a user gets wrong gets a line that says so, and no stack trace.
  const absent = await cliResult(['parse', join(dir, 'nope.html')]);
  t.equal(absent.code, 1);
  t.match(absent.stderr, /cannot read .*nope\.html: no such file/);
  const broken = join(dir, 'broken.html.gz');
  writeFileSync(broken, Buffer.from([0x1f, 0x8b, 1, 2, 3]));
  const bad = await cliResult(['parse', broken]);
  t.equal(bad.code, 1);
  t.match(bad.stderr, /not a valid gzip file/);
  const format = await cliResult(['parse', gz, '--output', 'xml']);
  t.equal(format.code, 1);
  t.match(format.stderr, /--output must be json or compat/);

  // An interstitial is reported as what it is (exit 2), never printed as an empty result.
  const captcha = await cliResult(['parse', join(fixturesDir, 'serp/websearcher/fixtures-head/sorry_index.html.gz')]);
  t.equal(captcha.code, 2);
  t.equal(captcha.stdout, '');
  t.match(captcha.stderr, /not a results page: captcha/);
});
