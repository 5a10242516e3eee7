import type { DetectedLocation, LocationSource } from '../contracts/result.js';
import { callAround, fragmentOf, unescapeJs } from './deferred.js';
import { type HTMLElement, qs, qsa, textOf } from './dom/index.js';

/**
 * Where Google says it placed the search: the line at the foot of a result page, "San Francisco, California - From
 * your IP address - Update location" (docs/locations.md#where-google-placed-a-search). Four forms are read, each by
 * markers that do not depend on the interface language:
 * - the line itself (2021–26, desktop and mobile, and pages fetched without JavaScript): a round icon whose class is
 *   `unknown_loc` (`known_loc` when the device's own position was used), the place in the element after it, then the
 *   phrase that says where the place came from;
 * - the same line inside the script that fills the footer (`jsl.dh('fbar', '\x3cdiv …')` or `jsl.dh(this.id, "…")`,
 *   2024–26 pages fetched without running it), read as the deferred blocks are (deferred.ts);
 * - the basic HTML page (no JavaScript, 2025): the place and the phrase before a "Learn more" link to Google's help
 *   page on locations (`ws_settings_location`);
 * - 2021–22 pages, whose footer a script writes from a settings object: its `uul_text` (the place) and `msg_dsc`
 *   (the phrase; the same text as `msg_dvl`, "From your device", when the device's position was used).
 * The phrase is localised: it is matched in the languages below, and is `unknown` in any other.
 */
export const parseDetectedLocation = (root: HTMLElement, raw: string): DetectedLocation | undefined => {
  const shown = lineOf(root) ?? basicLine(root) ?? scriptLine(raw);
  return shown && shown !== UNDETERMINED ? shown : undefined;
};

/** Google says it could not place the search ("Unknown - Can't determine location"): no place to report. */
const UNDETERMINED = Symbol('undetermined');
type Found = DetectedLocation | typeof UNDETERMINED | undefined;

/** The icon's classes: `known_loc` when the place is the device's own position. */
const ICON = '.unknown_loc, .known_loc';

/** Text that only separates the line's parts: " - ", " · ", no-break spaces. */
const SEPARATOR = /^[\s\u00a0\u202f\-–—·•|]*$/;

/** The first line in `root`: an icon followed by the place. */
const lineOf = (root: HTMLElement): Found => {
  // the first few: a page shows one line (two with the script's copy), and each read looks along its row
  for (const icon of qsa(root, ICON).slice(0, MAX_TRIES)) {
    const found = lineAt(icon);
    if (found) return found;
  }
  return undefined;
};

const lineAt = (icon: HTMLElement): Found => {
  const parent = icon.parentNode;
  if (!parent) return undefined;
  const siblings = parent.childNodes;
  const at = siblings.indexOf(icon);
  const place = siblings
    .slice(at + 1)
    .find((n): n is HTMLElement => n.nodeType === 1 && textOf(n as HTMLElement) !== '');
  const name = cleanName(textOf(place));
  if (!place || !name) return undefined;
  // the line is the icon's grandparent: the link that opens the location dialog (desktop, mobile), the footer's
  // row (pages without JavaScript), or the footer itself (2022 pages, where icon and place sit in the row)
  const phrase = phraseAfter(parent.parentNode ?? parent, place);
  if (phrase !== undefined && UNDETERMINED_PHRASE.test(phrase)) return UNDETERMINED;
  const source = sourceOf(phrase);
  return { name, source: source === 'unknown' && icon.classes.includes('known_loc') ? 'precise' : source };
};

/** The first text after `place` inside `line` that is not a separator, stopping at a link or the "Update" button. */
const phraseAfter = (line: HTMLElement, place: HTMLElement): string | undefined => {
  let past = false;
  let found: string | undefined;
  const walk = (el: HTMLElement): boolean => {
    for (const c of el.childNodes) {
      if (found !== undefined) return true;
      if (c === place) {
        past = true;
        continue;
      }
      if (c.nodeType === 3) {
        const text = c.text.replace(/\s+/g, ' ').trim();
        if (past && !SEPARATOR.test(text)) found = text;
        continue;
      }
      const e = c as HTMLElement;
      if (past && (e.localName === 'a' || e.localName === 'update-location')) return true;
      if (e.localName === 'script' || e.localName === 'style') continue;
      if (walk(e)) return true;
    }
    return found !== undefined;
  };
  walk(line);
  return found;
};

/**
 * The line where only a script holds it, in one pass over the page (a regular expression with both markers reads a
 * 3 MB page in ~1 ms, two indexOf passes in ~2): the icon's class inside a deferred call's markup (never one in a style
 * sheet or elsewhere in a script), that markup parsed and read as above; or the 2021–22 settings object.
 */
const scriptLine = (raw: string): Found => {
  const markers = /known_loc|uul_text/g;
  // a page has one or two; a hostile one could hold a million, each read costing up to a bounded look back: the
  // first few are read, and a call already read is passed over whole
  for (let m = markers.exec(raw), tries = 0; m && tries < MAX_TRIES; m = markers.exec(raw)) {
    if (m[0] === 'uul_text') {
      tries += 1;
      const found = settingsLine(raw, m.index);
      if (found) return found;
      continue;
    }
    // `unknown_loc` ends with `known_loc`; `.unknown_loc{…}` is a style sheet's
    const start = raw.startsWith('un', m.index - 2) ? m.index - 2 : m.index;
    if (raw[start - 1] === '.') continue;
    tries += 1;
    const call = callAround(raw, start);
    const fragment = call && fragmentOf(raw, call);
    const found = fragment && lineOf(fragment);
    if (found) return found;
    if (call) markers.lastIndex = Math.max(markers.lastIndex, call.end);
  }
  return undefined;
};

/** markers read at most, per page (one or two on Google's pages) */
const MAX_TRIES = 8;

/**
 * The basic HTML page's footer: `<span>324008, Kota, Rajasthan</span> - <span>From your IP address</span> - <a
 * href="…ws_settings_location…">Learn more</a>`; the row's texts before the link are the place and the phrase.
 */
const basicLine = (root: HTMLElement): Found => {
  const link = qs(root, 'a[href*="ws_settings_location"]');
  const row = link?.parentNode;
  if (!link || !row) return undefined;
  const texts: string[] = [];
  for (const c of row.childNodes) {
    if (c === link) break;
    const text = c.nodeType === 3 ? c.text.replace(/\s+/g, ' ').trim() : textOf(c as HTMLElement);
    if (!SEPARATOR.test(text)) texts.push(text);
  }
  const name = cleanName(texts[0] ?? '');
  if (!name) return undefined;
  if (texts[1] !== undefined && UNDETERMINED_PHRASE.test(texts[1])) return UNDETERMINED;
  return { name, source: sourceOf(texts[1]) };
};

/** A string member of the settings object, as JSON writes it once the script's own escapes are undone. */
const member = (json: string, name: string): string | undefined => {
  const m = new RegExp(`"${name}":("(?:[^"\\\\]|\\\\.)*")`).exec(json);
  if (!m?.[1]) return undefined;
  try {
    return JSON.parse(m[1]) as string;
  } catch {
    return undefined;
  }
};

/** 2021–22: the settings object of the script that writes the footer (`"dvl":{…,"uul_text":"…"}`), its `uul_text` at `at`. */
const settingsLine = (raw: string, at: number): Found => {
  // the object's own key (`"dvl":{`, its quotes escaped as the script writes them), not `msg_dvl` inside it; looked
  // for in the 4 kB before (V8's lastIndexOf reads character by character)
  const lo = Math.max(0, at - 4000);
  const before = raw.slice(lo, at);
  const key = Math.max(...['dvl\\x22:{', 'dvl\\":{', 'dvl":{'].map((k) => before.lastIndexOf(k)));
  const from = key < 0 ? -1 : lo + key;
  const to = raw.indexOf('}', at);
  if (from < 0 || to < 0) return undefined;
  const json = unescapeJs(raw, from, to);
  if (json === undefined) return undefined;
  const name = cleanName(member(json, 'uul_text') ?? '');
  if (!name) return undefined;
  const phrase = member(json, 'msg_dsc');
  const device = member(json, 'msg_dvl');
  return { name, source: phrase !== undefined && phrase === device ? 'precise' : sourceOf(phrase) };
};

const cleanName = (text: string): string =>
  text
    .replace(/[\s\u00a0\u202f]+/g, ' ')
    .replace(/^[\s\-–—·]+|[\s\-–—·]+$/g, '')
    .trim();

/** "Unknown - Can't determine location": Google has no place for the search. */
const UNDETERMINED_PHRASE = /can[’']?t determine|cannot determine|location unavailable/i;

/**
 * The phrase → where the place came from. "IP" is written as such in every language seen (es, fr, pt, sv, ja, ko,
 * th, vi); the other phrases in English and the languages the fixtures or Google's own help pages show.
 */
const SOURCES: ReadonlyArray<readonly [LocationSource, RegExp]> = [
  [
    'past_activity',
    /past activity|activité passée|actividad anterior|atividade anterior|attività passata|bisherigen Aktivität/i,
  ],
  ['places', /your places|vos adresses|tus sitios|seus lugares|deine Orte|tuoi luoghi/i],
  [
    'precise',
    /your device|precise location|votre appareil|tu dispositivo|seu dispositivo|deinem Gerät|tuo dispositivo|устройств|uređaj|デバイス|기기/i,
  ],
  ['ip_address', /(^|[^A-Za-z])IP([^A-Za-z]|$)|internet/i],
];

export const sourceOf = (phrase: string | undefined): LocationSource => {
  if (!phrase) return 'unknown';
  for (const [source, pattern] of SOURCES) if (pattern.test(phrase)) return source;
  return 'unknown';
};
