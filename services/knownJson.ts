import { randomBytes } from 'node:crypto';

/**
 * Objects whose JSON text this process already made (docs/decisions.md#raw-html-and-finished-answers: a crawl's result,
 * ~100–700 kB, is serialised once for the blob store; its read-model document embeds the same object and was serialised
 * again on the event loop, ~3 ms a job while crawls ran). The text is kept only while the object lives, and the object
 * must not change after it is registered: the text stands for it.
 */
const known = new WeakMap<object, string>();

export const rememberJson = (value: object, json: string) => {
  known.set(value, json);
};

/** a string no document holds (random per process): where a known value's text goes in */
const TOKEN = `\u0000known-json:${randomBytes(16).toString('hex')}`;
const QUOTED_TOKEN = JSON.stringify(TOKEN);

/**
 * JSON.stringify of a document as pieces, with every top-level property whose value has known text put in as that
 * text instead of being serialised again: joined, they are exactly JSON.stringify's text. Undefined when no value's
 * text is known. Only the top level is looked at (a few keys), so other documents cost what they did.
 */
export const knownJsonParts = (doc: unknown): string[] | undefined => {
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) return undefined;
  let texts: string[] | undefined;
  let marked: Record<string, unknown> | undefined;
  for (const k in doc) {
    const value = (doc as Record<string, unknown>)[k];
    if (value === null || typeof value !== 'object') continue;
    const text = known.get(value);
    if (text === undefined) continue;
    texts ??= [];
    marked ??= { ...doc };
    marked[k] = TOKEN;
    texts.push(text);
  }
  if (!texts || !marked) return undefined;
  const pieces = JSON.stringify(marked).split(QUOTED_TOKEN);
  const parts: string[] = [pieces[0]];
  for (let i = 0; i < texts.length; i++) parts.push(texts[i], pieces[i + 1]);
  return parts;
};

/**
 * JSON.stringify of a document, with the known text of its top-level values put in (knownJsonParts). `spliced` says
 * whether known text went in: the document holds a result this process made (and is big).
 */
export const serialiseDoc = (doc: unknown): { json: string; spliced: boolean } => {
  const parts = knownJsonParts(doc);
  return parts ? { json: parts.join(''), spliced: true } : { json: JSON.stringify(doc), spliced: false };
};

/**
 * An answer's UTF-8 bytes: the known pieces encoded one by one into one buffer, so no string of the whole answer is
 * made (a 400 kB string goes straight to the old generation), or JSON.stringify's text when nothing is known.
 */
export const jsonBytes = (value: unknown): Buffer | string => {
  const parts = knownJsonParts(value);
  if (!parts) return JSON.stringify(value);
  let size = 0;
  for (const part of parts) size += Buffer.byteLength(part, 'utf8');
  const bytes = Buffer.allocUnsafeSlow(size);
  let at = 0;
  for (const part of parts) at += bytes.write(part, at, 'utf8');
  return bytes;
};

/**
 * Each member's JSON text, in the object's order (undefined, functions and symbols left out, as JSON.stringify
 * does), each object member's text remembered: a document or an answer that embeds one of those members as it is (a
 * result's organic_results, serp_features) is written from that text. joinMembers of them is JSON.stringify's text of
 * a plain object whose members have no toJSON. The texts can cross to another thread with the object, which
 * remembers them there (rememberMembers).
 */
export const memberTexts = (value: Record<string, unknown>): [string, string][] => {
  const members: [string, string][] = [];
  for (const k in value) {
    const v = value[k];
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
    const text = JSON.stringify(v);
    if (v !== null && typeof v === 'object') known.set(v, text);
    members.push([k, text]);
  }
  return members;
};

/** the object's JSON text from its members' (memberTexts) */
export const joinMembers = (members: [string, string][]): string =>
  `{${members.map(([k, text]) => `${JSON.stringify(k)}:${text}`).join(',')}}`;

/**
 * Remembers an object's text from its members' (memberTexts), and each object member's text: for a structured clone
 * of the object on another thread, whose members are then written from the texts made on the first thread. For the
 * object they were made from, once its own text is remembered (prepareResult does), nothing new is remembered.
 */
export const rememberMembers = (value: Record<string, unknown>, members: [string, string][]) => {
  for (const [k, text] of members) {
    const v = value[k];
    if (v !== null && typeof v === 'object') known.set(v, text);
  }
  if (!known.has(value)) known.set(value, joinMembers(members));
};
