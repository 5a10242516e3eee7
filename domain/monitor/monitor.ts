import { type EventOf, MonitorChanged, MonitorCreated, type MonitorDefinition } from '../../contracts/events.js';
import type { Decider } from '../kernel/decider.js';
import { DomainError, errorCodes } from '../kernel/errors.js';

export type MonitorEvent = EventOf<'MonitorCreated'> | EventOf<'MonitorChanged'> | EventOf<'MonitorDeleted'>;

interface Existing {
  status: 'active' | 'deleted';
  monitorId: string;
  keyId: string;
  keywords: string[];
  domains: string[];
  paused: boolean;
}
export type MonitorState = { status: 'none' } | Existing;

/** what a monitor is created with: declared once, in the contract of `MonitorCreated` */
export type { MonitorDefinition };

type Changed = EventOf<'MonitorChanged'>['data'];
/** keywords and domains are edited through their lists (added, removed), never set whole */
type ListEdit = 'keywordsAdded' | 'keywordsRemoved' | 'domainsAdded' | 'domainsRemoved';

/**
 * What a change sets again, as `MonitorChanged` declares it: every field of the event but the monitor, the list edits
 * and the time (null: back to none, or to the default). A field added there is changeable at once: the decider
 * records it, the monitors view applies it (`MONITOR_SETTINGS`), and the api is asked for it where it maps a PATCH.
 */
export type MonitorSettings = Omit<Changed, 'monitorId' | ListEdit | 'changedAt'>;
export type MonitorSetting = keyof MonitorSettings;
const notSettings: ReadonlySet<string> = new Set([
  'monitorId',
  'changedAt',
  'keywordsAdded',
  'keywordsRemoved',
  'domainsAdded',
  'domainsRemoved',
]);
/** the settings in the order `MonitorChanged` declares them (the order its events are recorded and projected in) */
export const MONITOR_SETTINGS = Object.keys(MonitorChanged.shape.data.shape).filter(
  (k) => !notSettings.has(k),
) as MonitorSetting[];

/** the definition's fields no change sets: who and what a monitor is, and its lists (edited, not set) */
type Fixed = 'monitorId' | 'keyId' | 'keywords' | 'domains' | 'search' | 'backfill';
type Placed<Unplaced extends never> = Unplaced;
/**
 * Every field of the definition is either a setting (`MonitorChanged` records it) or fixed at creation: a field added
 * to `MonitorDefinition` fails to compile here, naming it, until it is placed in one or the other.
 */
export type EveryFieldPlaced = Placed<Exclude<keyof MonitorDefinition, MonitorSetting | Fixed>>;

export interface MonitorChange extends MonitorSettings {
  addKeywords?: string[];
  removeKeywords?: string[];
  addDomains?: string[];
  removeDomains?: string[];
}

export type MonitorCommand =
  | ({ type: 'CreateMonitor'; now: string } & MonitorDefinition)
  | ({ type: 'ChangeMonitor'; monitorId: string; keyId: string; maxKeywords: number; now: string } & MonitorChange)
  | { type: 'DeleteMonitor'; monitorId: string; keyId: string; now: string };

/** the fields that are set (a field left unset is absent from the event, not recorded as undefined) */
const defined = (o: object) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

const invalid = (message: string) => new DomainError(errorCodes.monitorInvalid, message);

/** what `change` asks for, checked against the monitor as it is; throws on a change that cannot apply */
const decideChange = (state: Existing, c: Extract<MonitorCommand, { type: 'ChangeMonitor' }>) => {
  const kw = new Set(state.keywords);
  for (const k of c.addKeywords ?? []) if (kw.has(k)) throw invalid(`keyword "${k.slice(0, 100)}" is already tracked`);
  for (const k of c.removeKeywords ?? []) if (!kw.has(k)) throw invalid(`keyword "${k.slice(0, 100)}" is not tracked`);
  const dom = new Set(state.domains);
  for (const d of c.addDomains ?? []) if (dom.has(d)) throw invalid(`domain "${d}" is already tracked`);
  for (const d of c.removeDomains ?? []) if (!dom.has(d)) throw invalid(`domain "${d}" is not tracked`);
  if (new Set(c.addKeywords).size !== (c.addKeywords ?? []).length) throw invalid('add_keywords repeats a keyword');
  if (new Set(c.addDomains).size !== (c.addDomains ?? []).length) throw invalid('add_domains repeats a domain');
  const keywords = state.keywords.length + (c.addKeywords?.length ?? 0) - (c.removeKeywords?.length ?? 0);
  if (keywords < 1) throw invalid('a monitor needs at least one keyword: delete the monitor instead');
  if (keywords > c.maxKeywords) {
    throw new DomainError(
      errorCodes.monitorLimit,
      `this key's tier allows ${c.maxKeywords} keywords per monitor; the change would make ${keywords}`,
    );
  }
  const domains = state.domains.length + (c.addDomains?.length ?? 0) - (c.removeDomains?.length ?? 0);
  if (domains < 1) throw invalid('a monitor needs at least one domain');
  if (domains > 20) throw invalid('a monitor tracks at most 20 domains');
};

/**
 * A monitor's configuration (docs/rank-tracking.md): created once, changed, deleted once. A monitor of another key is
 * "not found", exactly like one that does not exist.
 */
export const monitorDecider: Decider<MonitorState, MonitorCommand, MonitorEvent> = {
  initialState: () => ({ status: 'none' }),
  decide(command, state) {
    if (command.type === 'CreateMonitor') {
      if (state.status !== 'none') throw invalid(`monitor ${command.monitorId} exists`);
      const { type: _t, now, ...def } = command;
      // in the schema's member order, unset fields left out: the live projection stores what this returns, a
      // rebuild the parsed event, and the two must write the same bytes (docs/design.md)
      return [{ type: 'MonitorCreated', data: MonitorCreated.shape.data.parse({ ...defined(def), createdAt: now }) }];
    }
    if (state.status !== 'active' || state.keyId !== command.keyId) {
      throw new DomainError(errorCodes.monitorNotFound, 'monitor not found');
    }
    if (command.type === 'DeleteMonitor') {
      return [{ type: 'MonitorDeleted', data: { monitorId: command.monitorId, deletedAt: command.now } }];
    }
    decideChange(state, command);
    const {
      type: _t,
      monitorId,
      keyId: _k,
      maxKeywords: _m,
      now,
      addKeywords,
      removeKeywords,
      addDomains,
      removeDomains,
      ...settings
    } = command;
    return [
      {
        type: 'MonitorChanged',
        data: MonitorChanged.shape.data.parse({
          monitorId,
          ...(addKeywords?.length ? { keywordsAdded: addKeywords } : {}),
          ...(removeKeywords?.length ? { keywordsRemoved: removeKeywords } : {}),
          ...(addDomains?.length ? { domainsAdded: addDomains } : {}),
          ...(removeDomains?.length ? { domainsRemoved: removeDomains } : {}),
          ...defined(settings),
          changedAt: now,
        }),
      },
    ];
  },
  evolve(state, event) {
    switch (event.type) {
      case 'MonitorCreated': {
        const { monitorId, keyId, keywords, domains } = event.data;
        return { status: 'active', monitorId, keyId, keywords, domains, paused: false };
      }
      case 'MonitorChanged': {
        if (state.status === 'none') return state;
        const d = event.data;
        const drop = (list: string[], gone?: string[]) => (gone ? list.filter((x) => !gone.includes(x)) : list);
        return {
          ...state,
          keywords: [...drop(state.keywords, d.keywordsRemoved), ...(d.keywordsAdded ?? [])],
          domains: [...drop(state.domains, d.domainsRemoved), ...(d.domainsAdded ?? [])],
          paused: d.paused ?? state.paused,
        };
      }
      case 'MonitorDeleted':
        return state.status === 'none' ? state : { ...state, status: 'deleted' };
    }
  },
};
