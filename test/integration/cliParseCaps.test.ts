import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { cliResult, removeDir, tempDataDir } from '../support/service.js';

/** `serp-api parse` reads a file's pages as the crawler reads a fetched page (docs/security.md). */
t.test('serp-api parse FILE takes the crawler’s caps: bytes, tags and the parse deadline', async (t) => {
  const dir = tempDataDir('cli-parse-caps');
  t.teardown(() => removeDir(dir));
  const file = (name: string, body: string) => {
    const path = join(dir, name);
    writeFileSync(path, body);
    return path;
  };
  const big = await cliResult(['parse', file('big.html', `<html><body>${'x'.repeat(9 * 2 ** 20)}</body></html>`)]);
  t.equal(big.code, 1, 'over 8 MB');
  t.match(big.stderr, /not parsed: the page is \d+ bytes, over the 8388608 the crawler reads/);
  t.equal(big.stdout, '');
  const dense = await cliResult(['parse', file('dense.html', `<html><body>${'<b>'.repeat(260_000)}</body></html>`)]);
  t.equal(dense.code, 1, 'over the tag limit');
  t.match(dense.stderr, /not parsed: the page holds more than 250000 tags/);
  // a page that takes well over a millisecond (100,000 elements, under the tag cap): the deadline ends its parse thread
  const slow = await cliResult(['parse', file('slow.html', `<html><body>${'<p class="a">x</p>'.repeat(100_000)}`)], {
    SERP_PARSE_TIMEOUT_MS: '1',
  });
  t.equal(slow.code, 1, 'past the deadline');
  t.match(slow.stderr, /not parsed: the page did not parse within 1 ms/);
  const stuck = await cliResult(['parse', file('stuck.html', `<html><body>${'<a '.repeat(30)}`)]);
  t.equal(stuck.code, 0, 'the pinned page of the security pass parses at once');
  t.same(JSON.parse(stuck.stdout).organic_results, [], 'into an empty result: its tag is text');
});
