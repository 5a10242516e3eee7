import t from 'tap';
import type { z } from 'zod';
import {
  bounded,
  flag,
  fraction,
  list,
  oneOf,
  seconds,
  secret,
  text,
  tiers,
  wholeNumber,
} from '../../services/config/parsers.js';

/**
 * How each SERP_* variable is read (docs/configuration.md): unset or blank is the default, and a value that cannot
 * be used stops the start with a message that says what the variable takes.
 */
const read = (parser: z.ZodType, value: string | undefined) => {
  const r = parser.safeParse(value);
  return r.success ? { value: r.data } : { error: r.error.issues.map((i) => i.message).join('; ') };
};

t.test('config parsers › unset and blank are the default', async (t) => {
  t.same(read(wholeNumber(5), undefined), { value: 5 }, 'unset');
  t.same(read(wholeNumber(5), '  '), { value: 5 }, 'blank, as `SERP_X=` in a compose file');
  t.same(read(wholeNumber(), undefined), { value: undefined }, 'no default: absent');
  t.same(read(text('x'), ''), { value: 'x' }, 'text too');
  t.same(read(secret(), ''), { value: undefined }, 'an unset secret is absent (the mode decides)');
  t.same(read(list(), undefined), { value: [] }, 'an unset list is empty');
});

t.test('config parsers › values and what is refused', async (t) => {
  t.same(read(wholeNumber(5), '12'), { value: 12 }, 'a whole number');
  t.same(read(wholeNumber(5), '-1'), { error: 'must be a non-negative integer, got "-1"' }, 'not a negative one');
  t.same(read(wholeNumber(5), '1.5'), { error: 'must be a non-negative integer, got "1.5"' }, 'nor a fraction');
  t.same(read(wholeNumber(5, { zeroMeans: 'the default' }), '0'), { value: 5 }, '0 may mean the default');
  t.same(
    read(wholeNumber(5, { zeroMeans: Number.POSITIVE_INFINITY }), '0'),
    { value: Number.POSITIVE_INFINITY },
    'or no limit',
  );
  t.same([read(flag(false), '1'), read(flag(true), '0')], [{ value: true }, { value: false }], 'flags are 1 and 0');
  t.same(read(bounded(3, 1, 5, 'a whole number of nodes'), '9'), { error: 'must be at most 5' }, 'above the bound');
  t.same(read(bounded(3, 1, 5, 'a whole number of nodes'), '0'), { error: 'must be at least 1' }, 'below it');
  t.same(
    read(bounded(3, 1, 5, 'a whole number of nodes'), 'x'),
    { error: 'must be a whole number of nodes' },
    'no number',
  );
  t.same(
    read(oneOf(['embedded', 'distributed', 'test'] as const, 'embedded'), 'cluster'),
    { error: 'must be embedded, distributed or test, got "cluster"' },
    'a choice names every value it takes',
  );
  t.same(read(seconds(1), '0.25'), { value: 0.25 }, 'seconds take decimals');
  t.same(
    read(seconds(1), 'soon'),
    { error: 'must be a non-negative number of seconds, got "soon"' },
    'and only numbers',
  );
  t.same(
    read(fraction(0.5, 0.9), '0.95'),
    { error: 'must be a number from 0 to 0.9, got "0.95"' },
    'a fraction past its max',
  );
  t.same(read(list(), ' a, ,b ,'), { value: ['a', 'b'] }, 'a list drops blanks and spaces');
  t.same(read(secret(), 'short'), { error: 'must be at least 16 characters' }, 'a secret too short to be one');
});

t.test('config parsers › tiers over the defaults', async (t) => {
  const defaults = { free: { monthlyQuota: 100, rateLimitPerMin: 10, monitors: 1, keywordsPerMonitor: 10, share: 1 } };
  const omitted = { monitors: 0, keywordsPerMonitor: 100, share: 1 };
  t.same(read(tiers(defaults, omitted), undefined), { value: defaults }, 'unset: the defaults');
  t.same(
    read(tiers(defaults, omitted), '{"pro":{"monthlyQuota":5000,"rateLimitPerMin":60,"share":4}}'),
    {
      value: {
        ...defaults,
        pro: { monitors: 0, keywordsPerMonitor: 100, share: 4, monthlyQuota: 5000, rateLimitPerMin: 60 },
      },
    },
    'a new tier joins the defaults, what it leaves out taken from the omitted limits',
  );
  t.match(read(tiers(defaults, omitted), '{pro'), { error: /^must be JSON/ }, 'text that is no JSON');
  t.match(
    read(tiers(defaults, omitted), '{"pro":{"monthlyQuota":5000,"rateLimitPerMin":0}}'),
    { error: /"rateLimitPerMin": N ≥ 1/ },
    'a rate of 0 a minute, with the shape it must have',
  );
});
