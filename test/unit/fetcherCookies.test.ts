import t from 'tap';
import { mergeCookies, parseCookieHeader, setCookieHeaderPairs } from '../../services/adapters/fetcher/cookies.js';

/**
 * A session's cookies (docs/fleet.md): what Google sets is kept for the session's next request, what it expires is
 * dropped, and the rest of the jar (the consent cookie the session started with) stays as it was.
 */
t.test('fetcher cookies › Set-Cookie lines update a session’s Cookie header', async (t) => {
  const updates = setCookieHeaderPairs([
    'NID=511=abc; expires=Tue, 08-Jun-2027 10:00:00 GMT; path=/; domain=.google.com; HttpOnly',
    'AEC=; Max-Age=0; path=/',
    '1P_JAR=2026-12-07-10; Max-Age=-1',
    'SOCS=new; Path=/; Secure',
  ]);
  t.same(
    updates,
    [
      ['NID', '511=abc'],
      ['AEC', undefined],
      ['1P_JAR', undefined],
      ['SOCS', 'new'],
    ],
    'a value keeps its own "=", attributes are dropped, and Max-Age 0 or below deletes',
  );
  const jar = mergeCookies('SOCS=old; AEC=x; 1P_JAR=y', updates);
  t.equal(jar, 'SOCS=new; NID=511=abc', 'expired cookies leave, a new value replaces the old in place, new ones join');
  t.equal(mergeCookies('a=1', [['', 'x']]), 'a=1', 'a line without a name changes nothing');
  t.equal(mergeCookies('', []), '', 'an empty jar stays empty');
});

t.test('fetcher cookies › a Cookie header read back', async (t) => {
  t.same(
    [...parseCookieHeader('a=1;b=2=3;  c = 4 ; junk; =nameless')],
    [
      ['a', '1'],
      ['b', '2=3'],
      ['c', '4'],
    ],
    'pairs with and without spaces; a part without a name is ignored',
  );
});
