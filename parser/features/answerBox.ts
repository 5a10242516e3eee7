import {
  closest,
  decodeText,
  type HTMLElement,
  hasAncestor,
  hasClass,
  qs,
  qsa,
  spacedText,
  textOf,
} from '../dom/index.js';
import { unwrapLink } from '../links.js';

/**
 * The answer box, typed as SerpApi types it. Direct answers have ids or data attributes that lasted
 * (`#cwos` calculator, `data-exchange-rate`/`.SwHCTb` currency, `#wob_wc` weather, `.Z0LcW` short answers); the
 * featured snippet is `.hgKElc`/`[data-attrid="wa:/description"]` outside People also ask, with its source link.
 */
export const answerBox = (root: HTMLElement): Record<string, unknown> | undefined =>
  calculator(root) ??
  currency(root) ??
  weather(root) ??
  dictionary(root) ??
  translation(root) ??
  shortAnswer(root) ??
  featuredSnippet(root) ??
  listFeaturedSnippet(root) ??
  basicFeaturedSnippet(root);

const calculator = (root: HTMLElement) => {
  const r = textOf(qs(root, '#cwos'));
  return r ? { type: 'calculator_result', result: r } : undefined;
};

const currency = (root: HTMLElement) => {
  const to = qs(root, '.DFlfde.SwHCTb') ?? qs(root, '[data-exchange-rate]');
  if (to) {
    const value = to.getAttribute('data-value') ?? textOf(to);
    const unit = textOf(qs(root, '.MWvIVe'));
    return { type: 'currency_converter', result: [value, unit].filter(Boolean).join(' ') };
  }
  // Basic (no-JS) layout: the converted amount is the first `.BNeawe.iBp4i` line of the first card.
  const basic = qs(root, '#main .BNeawe.iBp4i.AP7Wnd');
  if (basic && textOf(basic)) return { type: 'answer', answer: textOf(basic) };
  return undefined;
};

const weather = (root: HTMLElement) => {
  const w = qs(root, '#wob_wc');
  if (!w) return undefined;
  const box: Record<string, unknown> = { type: 'weather_result' };
  const temperature = textOf(qs(w, '#wob_tm'));
  if (temperature) box.temperature = temperature;
  const weatherText = textOf(qs(w, '#wob_dc'));
  if (weatherText) box.weather = weatherText;
  const location = textOf(qs(w, '#wob_loc') ?? qs(root, '.BBwThe'));
  if (location) box.location = location;
  for (const [id, key] of [
    ['#wob_pp', 'precipitation'],
    ['#wob_hm', 'humidity'],
    ['#wob_ws', 'wind'],
  ] as const) {
    const v = textOf(qs(w, id));
    if (v) box[key] = v;
  }
  return box;
};

/**
 * The dictionary box ("Definitions from Oxford Languages"), found by its `data-attrid` names, which are the same in
 * every interface language (2021–26): `EntryHeader` holds the syllables and the phonetic spelling, each
 * `SenseDefinition` one definition with its example quote in a `.vmod` child, `SenseThesaurus` its synonyms. The
 * word type ("noun") heads the numbered list of senses. SerpApi types this answer box `dictionary_results`.
 */
const dictionary = (root: HTMLElement) => {
  const senses = qsa(root, '[data-attrid="SenseDefinition"]');
  if (senses.length === 0) return undefined;
  const box: Record<string, unknown> = { type: 'dictionary_results' };
  const header = spacedText(qs(root, '[data-attrid="EntryHeader"]'));
  const phonetic = /\/[^/]+\//.exec(header)?.[0];
  const syllables = (phonetic ? header.slice(0, header.indexOf(phonetic)) : header).trim();
  if (syllables) box.syllables = syllables;
  if (phonetic) box.phonetic = phonetic;
  const list = closest(senses[0] as HTMLElement, 'ol') ?? closest(senses[0] as HTMLElement, 'ul');
  const heading = list?.parentNode?.childNodes.find((c): c is HTMLElement => c.nodeType === 1 && c !== list);
  const wordType = textOf(qs(heading, 'i'));
  if (wordType) box.word_type = wordType;
  const definitions: string[] = [];
  const examples: string[] = [];
  for (const sense of senses) {
    const example = qs(sense, '.vmod');
    const definition = spacedText(sense, (e) => e === example);
    if (definition) definitions.push(definition);
    const quote = textOf(example).replace(/^["“]|["”]$/g, '');
    if (quote) examples.push(quote);
  }
  box.definitions = definitions;
  if (examples.length) box.examples = examples;
  const synonyms = qsa(root, '[data-attrid="SenseThesaurus"]').flatMap((t) =>
    qsa(t, '[role="listitem"]').map((i) => textOf(i)),
  );
  if (synonyms.length) box.synonyms = [...new Set(synonyms.filter(Boolean))];
  return box;
};

/**
 * The translate widget, by its ids (`#tw-main`, 2020–26): `#tw-sl`/`#tw-tl` name the languages in the interface
 * language and carry the code in `data-lang`; the texts sit in `<pre id="tw-source-text">` / `#tw-target-text` (kept
 * as raw text, so their inner spans are stripped here) and the target's romanisation in `#tw-target-rmn`.
 */
const translation = (root: HTMLElement) => {
  const main = qs(root, '#tw-main');
  const target = preText(qs(main, '#tw-target-text'));
  if (!main || !target) return undefined;
  const side = (langId: string, text: string, pronunciationId?: string) => {
    const lang = qs(main, langId);
    const out: Record<string, string> = { text };
    const name = textOf(lang);
    if (name) out.language = name;
    const code = lang?.getAttribute('data-lang');
    if (code) out.language_code = code;
    const pronunciation = pronunciationId ? preText(qs(main, pronunciationId)) : '';
    if (pronunciation) out.pronunciation = pronunciation;
    return out;
  };
  const source = preText(qs(main, '#tw-source-text')) || textOf(qs(main, '#tw-source-text-ta'));
  return {
    type: 'translation_result',
    translation: { source: side('#tw-sl', source), target: side('#tw-tl', target, '#tw-target-rmn') },
  };
};

/** Text of an element whose content the tree keeps as raw text (`pre`): markup stripped, entities decoded. */
const preText = (el: HTMLElement | null | undefined): string =>
  el
    ? decodeText(el.rawText.replace(/<[^>]*>/g, ''))
        .replace(/\s+/g, ' ')
        .trim()
    : '';

const shortAnswer = (root: HTMLElement) => {
  const a = qs(root, '.Z0LcW');
  const answer = textOf(a);
  return answer ? { type: 'answer', answer } : undefined;
};

const featuredSnippet = (root: HTMLElement) => {
  const candidates = [...qsa(root, '.hgKElc'), ...qsa(root, '[data-attrid="wa:/description"]')];
  const body = candidates.find((c) => !hasAncestor(c, (e) => hasClass(e, 'related-question-pair') || e.id === 'rhs'));
  if (!body) return undefined;
  const block =
    closest(body, 'block-component') ?? closest(body, '.xpdopen') ?? closest(body, '.MjjYud') ?? body.parentNode;
  const box: Record<string, unknown> = { type: 'organic_result', snippet: spacedText(body) };
  const words = [
    ...new Set(
      qsa(body, 'b, em')
        .map((e) => textOf(e))
        .filter(Boolean),
    ),
  ];
  if (words.length) box.snippet_highlighted_words = words;
  return withSource(box, block);
};

/** The snippet's source: the result under it (title, link, displayed link). */
const withSource = (box: Record<string, unknown>, block: HTMLElement | null | undefined): Record<string, unknown> => {
  const a = qs(block, '.yuRUbf a') ?? qs(block, 'a h3')?.parentNode;
  const link = unwrapLink(a?.getAttribute('href'));
  if (link && /^https?:/.test(link)) {
    box.link = link;
    const title = textOf(qs(a, 'h3'));
    if (title) box.title = title;
    const cite = textOf(qs(block, 'cite'));
    if (cite) box.displayed_link = cite;
  }
  return box;
};

/**
 * A featured snippet that is a list (2023–25: a heading, then `ul`/`ol` items cut short by a "More items…" link,
 * then the source result), with no snippet text for `featuredSnippet` to find. The block is the one holding the
 * help link about featured snippets (`support.google.com/websearch?p=featured_snippets`, the same in every
 * language), outside People also ask, whose answers carry the same link. SerpApi's answer box with `list`.
 */
const listFeaturedSnippet = (root: HTMLElement) => {
  const help = qsa(root, 'a[href*="featured_snippets"]').find(
    (a) => !hasAncestor(a, (e) => hasClass(e, 'related-question-pair') || e.id === 'rhs'),
  );
  const block = help ? (closest(help, 'block-component') ?? closest(help, '.MjjYud')) : null;
  const list = qs(block, 'ul') ?? qs(block, 'ol');
  if (!block || !list) return undefined;
  const items = qsa(list, 'li')
    .map((li) => textOf(li))
    .filter(Boolean);
  if (!items.length) return undefined;
  return withSource({ type: 'organic_result', list: items }, block);
};

/**
 * The basic (no-JS) page's featured snippet: a `.Gx5Zad` card holding the help link about featured snippets
 * (`support.google.com/websearch?p=featured_snippets`, the same in every language), the snippet (`.PqksIc`) and the
 * source's title anchor. It is the answer box, not the first organic result.
 */
const basicFeaturedSnippet = (root: HTMLElement) => {
  const help = qsa(root, 'a[href*="featured_snippets"]').find((a) => closest(a, '.Gx5Zad'));
  const block = help ? closest(help, '.Gx5Zad') : null;
  if (!help || !block) return undefined;
  const box: Record<string, unknown> = { type: 'organic_result' };
  const snippet = spacedText(qs(block, '.PqksIc'));
  if (snippet) box.snippet = snippet;
  const a = qsa(block, 'a[href^="/url?"]').find((x) => x !== help && textOf(x));
  const link = unwrapLink(a?.getAttribute('href'));
  if (a && link && /^https?:/.test(link)) {
    box.link = link;
    const title = textOf(qs(a, '.Xb5VRe') ?? qs(a, '.vvjwJb'));
    if (title) box.title = title;
    const displayed = textOf(qs(a, '.UPmit'));
    if (displayed) box.displayed_link = displayed;
  }
  return box;
};
