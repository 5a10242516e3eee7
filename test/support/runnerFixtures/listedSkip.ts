import t from 'tap';

t.pass('runs');
t.test('a listed skip', { skip: 'needs a server this machine cannot run' }, async (t) => {
  t.fail('never runs');
});
