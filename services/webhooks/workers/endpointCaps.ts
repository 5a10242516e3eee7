import type { SendOutcome } from './sender.js';

/** whether an attempt's outcome is a timeout: the receiver took the connection and never answered */
const timedOut = (o: SendOutcome | undefined) =>
  o?.statusCode === undefined && /^no answer within/.test(o?.error ?? '');

/**
 * Each endpoint's cap on attempts in flight, AIMD as TCP's window (docs/webhooks.md#fair-share): it starts at an
 * eighth of the pool, halves (down to 1) when an attempt times out, and grows by one after each attempt that got an
 * answer (up to half the pool). A receiver that hangs is soon held to one attempt at a time, so its deliveries wait
 * in the queue instead of in the pool's slots; a healthy one climbs back as it answers. Endpoints back at their
 * starting cap with nothing in flight are forgotten.
 */
export const createEndpointCaps = (concurrency: number) => {
  const initial = Math.max(1, Math.floor(concurrency / 8));
  const max = Math.max(initial, Math.floor(concurrency / 2));
  const state = new Map<string, { cap: number; inFlight: number }>();
  const of = (id: string) => {
    let s = state.get(id);
    if (!s) {
      s = { cap: initial, inFlight: 0 };
      state.set(id, s);
    }
    return s;
  };
  return {
    free: (id: string) => {
      const s = state.get(id);
      return !s || s.inFlight < s.cap;
    },
    cap: (id: string) => state.get(id)?.cap ?? initial,
    /** attempts the endpoint may still start now */
    room: (id: string) => {
      const s = state.get(id);
      return s ? Math.max(0, s.cap - s.inFlight) : initial;
    },
    started(id: string) {
      of(id).inFlight += 1;
    },
    ended(id: string, outcome: SendOutcome | undefined) {
      const s = of(id);
      s.inFlight = Math.max(0, s.inFlight - 1);
      if (timedOut(outcome)) s.cap = Math.max(1, Math.floor(s.cap / 2));
      else if (outcome?.statusCode !== undefined) s.cap = Math.min(max, s.cap + 1);
      if (s.inFlight === 0 && s.cap === initial) state.delete(id);
    },
  };
};
