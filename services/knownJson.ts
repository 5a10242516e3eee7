import { randomBytes } from 'node:crypto';

/**
 * Objects whose JSON text this process already made (issue 14: a crawl's result, ~100–700 kB, is serialised once for
 * the blob store; its read-model document embeds the same object and was serialised again on the event loop, ~3 ms
 * a job while crawls ran). The text is kept only while the object lives, and the object must not change after it is
 * registered: the text stands for it.
 */
const known = new WeakMap<object, string>();

export const rememberJson = (value: object, json: string) => {
  known.set(value, json);
};

/** a string no document holds (random per process): where a known value's text goes in */
const TOKEN = `\u0000known-json:${randomBytes(16).toString('hex')}`;
const QUOTED_TOKEN = JSON.stringify(TOKEN);

/**
 * JSON.stringify of a document, with a top-level property whose value has known text put in as that text instead of
 * being serialised again. Only the top level is looked at (a few keys), so other documents cost what they did.
 * `spliced` says whether known text went in: the document holds a result this process made (and is big).
 */
export const serialiseDoc = (doc: unknown): { json: string; spliced: boolean } => {
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc))
    return { json: JSON.stringify(doc), spliced: false };
  let key: string | undefined;
  let text: string | undefined;
  for (const k in doc) {
    const value = (doc as Record<string, unknown>)[k];
    if (value !== null && typeof value === 'object') {
      text = known.get(value);
      if (text !== undefined) {
        key = k;
        break;
      }
    }
  }
  if (key === undefined || text === undefined) return { json: JSON.stringify(doc), spliced: false };
  const outer = JSON.stringify({ ...doc, [key]: TOKEN });
  const at = outer.indexOf(QUOTED_TOKEN);
  return { json: `${outer.slice(0, at)}${text}${outer.slice(at + QUOTED_TOKEN.length)}`, spliced: true };
};

export const stringifyDoc = (doc: unknown): string => serialiseDoc(doc).json;
