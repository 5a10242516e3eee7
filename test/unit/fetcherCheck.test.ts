import t from 'tap';
import { chooseFetcher, findChromium } from '../../services/compose/fetcherCheck.js';

t.test('chooseFetcher › the fetcher fits the machine', async (t) => {
  const none = () => undefined;
  const found = () => '/opt/chromium';
  t.same(chooseFetcher('http', undefined, none), { fetcher: 'http' }, 'http needs nothing');
  t.same(chooseFetcher('auto', undefined, found), { fetcher: 'auto', chromiumPath: '/opt/chromium' });
  const fallback = chooseFetcher('auto', undefined, none);
  t.equal(fallback.fetcher, 'http', 'auto without Chromium falls back to http');
  t.match(fallback.warning, /Chromium not found .*falls back to http.*apt-get install chromium/);
  t.throws(
    () => chooseFetcher('browser', '/nope/chrome', none),
    /SERP_FETCHER=browser needs Chromium, which is not at SERP_CHROMIUM_PATH=\/nope\/chrome: install it/,
    'browser without Chromium is a configuration error at start',
  );
});

t.test('findChromium › a configured path must be executable', async (t) => {
  t.equal(findChromium('/definitely/not/here'), undefined);
  t.equal(findChromium('/bin/sh'), '/bin/sh', 'any executable the operator names');
});
