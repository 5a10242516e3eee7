import t from 'tap';

// three leaf assertions under two levels of subtests, one of them failing: 2 passed, 1 failed
t.test('outer', async (t) => {
  t.ok(true, 'outer leaf');
  t.test('inner', async (t) => {
    t.equal(1, 1, 'inner leaf');
    t.equal(1, 2, 'inner failing leaf');
  });
});
