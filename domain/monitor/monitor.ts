import type { EventOf, MonitorDefinition, RecordedAlerts } from '../../contracts/events.js';
import type { Decider } from '../kernel/decider.js';
import { DomainError, errorCodes } from '../kernel/errors.js';
import type { RecordedSchedule } from './schedule.js';

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

export interface MonitorChange {
  name?: string;
  addKeywords?: string[];
  removeKeywords?: string[];
  addDomains?: string[];
  removeDomains?: string[];
  schedule?: RecordedSchedule;
  paused?: boolean;
  depth?: number;
  ctrCurve?: number[] | null;
  alerts?: RecordedAlerts | null;
}

export type MonitorCommand =
  | ({ type: 'CreateMonitor'; now: string } & MonitorDefinition)
  | ({ type: 'ChangeMonitor'; monitorId: string; keyId: string; maxKeywords: number; now: string } & MonitorChange)
  | { type: 'DeleteMonitor'; monitorId: string; keyId: string; now: string };

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
      const { type: _t, now, ctrCurve, alerts, ...def } = command;
      return [
        {
          type: 'MonitorCreated',
          data: { ...def, ...(ctrCurve ? { ctrCurve } : {}), ...(alerts ? { alerts } : {}), createdAt: now },
        },
      ];
    }
    if (state.status !== 'active' || state.keyId !== command.keyId) {
      throw new DomainError(errorCodes.monitorNotFound, 'monitor not found');
    }
    if (command.type === 'DeleteMonitor') {
      return [{ type: 'MonitorDeleted', data: { monitorId: command.monitorId, deletedAt: command.now } }];
    }
    decideChange(state, command);
    const c = command;
    return [
      {
        type: 'MonitorChanged',
        data: {
          monitorId: c.monitorId,
          ...(c.name !== undefined ? { name: c.name } : {}),
          ...(c.addKeywords?.length ? { keywordsAdded: c.addKeywords } : {}),
          ...(c.removeKeywords?.length ? { keywordsRemoved: c.removeKeywords } : {}),
          ...(c.addDomains?.length ? { domainsAdded: c.addDomains } : {}),
          ...(c.removeDomains?.length ? { domainsRemoved: c.removeDomains } : {}),
          ...(c.schedule !== undefined ? { schedule: c.schedule } : {}),
          ...(c.paused !== undefined ? { paused: c.paused } : {}),
          ...(c.depth !== undefined ? { depth: c.depth } : {}),
          ...(c.ctrCurve !== undefined ? { ctrCurve: c.ctrCurve } : {}),
          ...(c.alerts !== undefined ? { alerts: c.alerts } : {}),
          changedAt: c.now,
        },
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
