import type { EventOf } from '../../contracts/events.js';
import type { Decider } from '../kernel/decider.js';

export type AdminSessionEvent = EventOf<'AdminSessionStarted'> | EventOf<'AdminSessionEnded'>;

export type AdminSessionState = { status: 'none' } | { status: 'active' | 'ended'; sessionHash: string };

export type AdminSessionCommand =
  | { type: 'StartAdminSession'; sessionHash: string; expiresAt: string; now: string }
  | { type: 'EndAdminSession'; sessionHash: string; now: string };

/** A dashboard session: started once, ended at most once; ending an unknown or ended session changes nothing. */
export const adminSessionDecider: Decider<AdminSessionState, AdminSessionCommand, AdminSessionEvent> = {
  initialState: () => ({ status: 'none' }),
  decide(command, state) {
    if (command.type === 'StartAdminSession') {
      if (state.status !== 'none') return [];
      const { sessionHash, expiresAt, now } = command;
      return [{ type: 'AdminSessionStarted', data: { sessionHash, expiresAt, startedAt: now } }];
    }
    if (state.status !== 'active') return [];
    return [{ type: 'AdminSessionEnded', data: { sessionHash: command.sessionHash, endedAt: command.now } }];
  },
  evolve(state, event) {
    switch (event.type) {
      case 'AdminSessionStarted':
        return { status: 'active', sessionHash: event.data.sessionHash };
      case 'AdminSessionEnded':
        return state.status === 'none' ? state : { ...state, status: 'ended' };
    }
  },
};
