import t from 'tap';

// one listed skip (in skips.json beside this file), one that is not listed, and one pass
t.pass('runs');
t.test('a listed skip', { skip: 'needs a server this machine cannot run' }, async (t) => {
  t.fail('never runs');
});
t.test('an unlisted skip', { skip: 'nobody listed this' }, async (t) => {
  t.fail('never runs');
});
