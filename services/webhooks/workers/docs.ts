import { WEBHOOK_EVENT_TYPES } from '../../../contracts/webhookEvents.js';
import { WEBHOOK_EVENTS } from './eventTypes.js';

/** where the table sits in docs/webhooks.md */
export const EVENT_TYPES_BEGIN =
  '<!-- event-types:begin: generated from services/webhooks/workers/eventTypes.ts by `npm run docs:webhooks` -->';
export const EVENT_TYPES_END = '<!-- event-types:end -->';

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/**
 * docs/webhooks.md's table of event types, made from the registry (eventTypes.ts): each type, when it is sent, the
 * log events it is made from and the fields of its `data` (`?`: present only when it applies). `npm run docs:webhooks`
 * writes it between its markers; test/webhooks/workers/eventTypes.test.ts fails when the file differs.
 */
export const renderEventTypes = (): string =>
  [
    EVENT_TYPES_BEGIN,
    '| type | sent when | made from (events of the log) | `data` |',
    '|---|---|---|---|',
    ...WEBHOOK_EVENT_TYPES.map((type) => {
      const spec = WEBHOOK_EVENTS[type];
      const fields = Object.entries(spec.payload.shape).map(([name, schema]) =>
        schema.safeParse(undefined).success ? `\`${name}?\`` : `\`${name}\``,
      );
      return `| \`${type}\` | ${cell(spec.sentWhen)} | ${spec.sources.map((s) => `\`${s}\``).join(', ')} | ${fields.join(', ')} |`;
    }),
    EVENT_TYPES_END,
  ].join('\n');

/** `page` with its event-types table replaced by the registry's */
export const withEventTypes = (page: string): string => {
  const begin = page.indexOf(EVENT_TYPES_BEGIN);
  const end = page.indexOf(EVENT_TYPES_END);
  if (begin < 0 || end < begin) throw new Error('docs/webhooks.md has no event-types markers');
  return page.slice(0, begin) + renderEventTypes() + page.slice(end + EVENT_TYPES_END.length);
};
