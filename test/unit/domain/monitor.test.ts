import t from 'tap';
import { MonitorChanged } from '../../../contracts/events.js';
import { deciderSpec } from '../../../domain/kernel/givenWhenThen.js';
import {
  MONITOR_SETTINGS,
  type MonitorChange,
  type MonitorCommand,
  type MonitorDefinition,
  type MonitorEvent,
  monitorDecider,
} from '../../../domain/monitor/monitor.js';

const spec = deciderSpec(monitorDecider);
const at = '2026-03-01T09:15:00.000Z';
const later = '2026-03-02T09:15:00.000Z';

const definition: MonitorDefinition = {
  monitorId: 'mon_1',
  keyId: 'k1',
  name: 'Coffee in Austin',
  keywords: ['coffee', 'tea'],
  domains: ['mine.example', 'rival.example'],
  search: { device: 'mobile', location: 'Austin, Texas, United States' },
  depth: 100,
  schedule: 'daily',
  backfill: false,
};
const create: MonitorCommand = { type: 'CreateMonitor', ...definition, now: at };
const created: MonitorEvent = { type: 'MonitorCreated', data: { ...definition, createdAt: at } };
const change = (over: Partial<Extract<MonitorCommand, { type: 'ChangeMonitor' }>>): MonitorCommand => ({
  type: 'ChangeMonitor',
  monitorId: 'mon_1',
  keyId: 'k1',
  maxKeywords: 3,
  now: later,
  ...over,
});
const remove: MonitorCommand = { type: 'DeleteMonitor', monitorId: 'mon_1', keyId: 'k1', now: later };
const deleted: MonitorEvent = { type: 'MonitorDeleted', data: { monitorId: 'mon_1', deletedAt: later } };

t.test('Monitor › created', async (t) => {
  t.test('once, with its definition as given and nothing unset', async (t) => {
    t.same(spec.given([]).when(create), [created]);
    const [e] = spec.given([]).when({ ...create, ctrCurve: undefined, alerts: undefined });
    t.same(Object.keys(e?.data ?? {}), Object.keys(created.data), 'an unset field is absent, not undefined');
    t.throws(() => spec.given([created]).when(create), { code: 'SERP_MONITOR_INVALID', message: /mon_1 exists/ });
  });
  t.test('in the order its contract declares, whatever order it was given in', async (t) => {
    const shuffled = Object.fromEntries(Object.entries(create).reverse()) as MonitorCommand;
    const [e] = spec.given([]).when(shuffled);
    t.same(Object.keys(e?.data ?? {}), Object.keys(created.data));
  });
});

t.test('Monitor › changed', async (t) => {
  t.test('its lists are edited, its settings set; only what is asked is recorded', async (t) => {
    t.same(spec.given([created]).when(change({ addKeywords: ['milk'], removeDomains: ['rival.example'], depth: 20 })), [
      {
        type: 'MonitorChanged',
        data: {
          monitorId: 'mon_1',
          keywordsAdded: ['milk'],
          domainsRemoved: ['rival.example'],
          depth: 20,
          changedAt: later,
        },
      },
    ]);
    t.same(spec.given([created]).when(change({ ctrCurve: null, alerts: null, paused: true })), [
      {
        type: 'MonitorChanged',
        data: { monitorId: 'mon_1', paused: true, ctrCurve: null, alerts: null, changedAt: later },
      },
    ]);
  });
  t.test("the settings are MonitorChanged's members but the lists, recorded in its declared order", async (t) => {
    const declared = Object.keys(MonitorChanged.shape.data.shape);
    t.same(
      MONITOR_SETTINGS,
      declared.filter((k) => !/^(monitorId|changedAt|(keywords|domains)(Added|Removed))$/.test(k)),
    );
    const given = { alerts: { min_move: 3 }, ctrCurve: [0.5], depth: 30, paused: false, schedule: 'weekly', name: 'x' };
    const [e] = spec.given([created]).when(change(given as Partial<MonitorChange>));
    t.same(
      Object.keys(e?.data ?? {}),
      declared.filter((k) => k === 'monitorId' || k === 'changedAt' || k in given),
    );
  });
  t.test('a change that cannot apply is refused, naming why', async (t) => {
    const refused = [
      [change({ addKeywords: ['coffee'] }), /keyword "coffee" is already tracked/],
      [change({ removeKeywords: ['milk'] }), /keyword "milk" is not tracked/],
      [change({ addDomains: ['mine.example'] }), /domain "mine.example" is already tracked/],
      [change({ removeDomains: ['other.example'] }), /domain "other.example" is not tracked/],
      [change({ addKeywords: ['milk', 'milk'] }), /add_keywords repeats a keyword/],
      [change({ removeKeywords: ['coffee', 'tea'] }), /at least one keyword/],
      [change({ removeDomains: ['mine.example', 'rival.example'] }), /at least one domain/],
    ] as const;
    for (const [command, message] of refused) {
      t.throws(() => spec.given([created]).when(command), { code: 'SERP_MONITOR_INVALID', message });
    }
    t.throws(() => spec.given([created]).when(change({ addKeywords: ['milk', 'sugar'] })), {
      code: 'SERP_MONITOR_LIMIT',
      message: /allows 3 keywords per monitor; the change would make 4/,
    });
  });
  t.test('the lists a change is checked against are those the stream holds now', async (t) => {
    const grown: MonitorEvent = {
      type: 'MonitorChanged',
      data: { monitorId: 'mon_1', keywordsAdded: ['milk'], keywordsRemoved: ['tea'], changedAt: later },
    };
    t.match(spec.given([created, grown]).state(), { keywords: ['coffee', 'milk'] });
    t.throws(() => spec.given([created, grown]).when(change({ removeKeywords: ['tea'] })), {
      code: 'SERP_MONITOR_INVALID',
    });
  });
});

t.test("Monitor › another key's, or a deleted one, is not found; deleted once", async (t) => {
  t.throws(() => spec.given([created]).when(change({ keyId: 'k2', name: 'x' })), { code: 'SERP_MONITOR_NOT_FOUND' });
  t.throws(() => spec.given([]).when(change({ name: 'x' })), { code: 'SERP_MONITOR_NOT_FOUND' });
  t.same(spec.given([created]).when(remove), [deleted]);
  t.throws(() => spec.given([created, deleted]).when(remove), { code: 'SERP_MONITOR_NOT_FOUND' });
  t.throws(() => spec.given([created, deleted]).when(change({ name: 'x' })), { code: 'SERP_MONITOR_NOT_FOUND' });
  t.throws(() => spec.given([created]).when({ ...remove, keyId: 'k2' }), { code: 'SERP_MONITOR_NOT_FOUND' });
});
