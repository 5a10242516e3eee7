import t from 'tap';
import { changesBetween } from '../../projections/rankHistory/queries.js';
import { featureBits } from '../../projections/rankHistory/rankHistory.js';

/**
 * What changed for each tracked domain between two searches of a keyword (docs/rank-tracking.md): what the changes
 * query lists and the alerts are raised from.
 */
const at = '2026-12-07T10:00:00.000Z';
const state = (entries: Record<string, [number, string | null, string[]]>) =>
  new Map(
    Object.entries(entries).map(([d, [pos, url, features]]) => [
      d,
      [pos, url, featureBits(features)] as [number, string | null, number],
    ]),
  );

t.test('rank changes › between two searches', async (t) => {
  const before = state({
    'climber.example': [14, 'https://climber.example/a', []],
    'faller.example': [8, 'https://faller.example/', ['featured_snippet']],
    'steady.example': [3, 'https://steady.example/', []],
    'gone.example': [60, 'https://gone.example/', []],
  });
  const after = state({
    'climber.example': [6, 'https://climber.example/b', ['people_also_ask']],
    'faller.example': [12, 'https://faller.example/', []],
    'steady.example': [3, 'https://steady.example/', []],
    'gone.example': [0, null, []],
    'new.example': [1, 'https://new.example/', []],
  });
  const changes = changesBetween('coffee', before, after, at, 'run_1');
  const summary = changes.map(
    (c) => `${c.domain} ${c.kind}${c.top ? ` ${c.top}` : ''}${c.feature ? ` ${c.feature}` : ''}`,
  );
  t.same(
    summary,
    [
      'climber.example entered 10',
      'climber.example moved',
      'climber.example url_changed',
      'climber.example feature_gained people_also_ask',
      'faller.example left 10',
      'faller.example moved',
      'faller.example feature_lost featured_snippet',
      'gone.example left 100',
    ],
    'entering and leaving the top 10 and the top 100, moves, another URL, features gained and lost; nothing for a domain that did not change or was not tracked before',
  );
  t.match(
    changes[0],
    {
      keyword: 'coffee',
      from_position: 14,
      to_position: 6,
      from_url: 'https://climber.example/a',
      at,
      run_id: 'run_1',
    },
    'each change says from where to where',
  );
  t.match(changes.at(-1), { from_position: 60, to_position: null }, 'not ranked any more is a position of null');
});

t.test('rank changes › a monitor of depth 10 has one top', async (t) => {
  const changes = changesBetween(
    'tea',
    state({ 'a.example': [4, 'https://a.example/', []] }),
    state({ 'a.example': [0, null, []] }),
    at,
    'run_2',
    10,
  );
  t.same(
    changes.map((c) => [c.kind, c.top]),
    [['left', 10]],
    'left its top 10, once',
  );
});
