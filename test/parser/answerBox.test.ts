import t from 'tap';
import { loadDom } from '../../parser/dom/index.js';
import { answerBox } from '../../parser/features/answerBox.js';
import { parse } from '../../parser/index.js';
import { fixturesMissing, readFixtureText } from '../support/fixtures.js';

const answerBoxOf = (file: string): Record<string, unknown> | undefined => {
  const out = parse(readFixtureText(file), { captureAio: false });
  if (out.kind !== 'serp') throw new Error(out.detail);
  return out.serp.serp_features.answer_box as Record<string, unknown> | undefined;
};

t.test('answer box › the dictionary box is dictionary_results', { skip: fixturesMissing() }, async (t) => {
  // "define judgement" (2024-03): Oxford Languages' entry, two senses, each with an example and synonyms.
  const judgement = answerBoxOf('serp/websearcher/2024-03-13_define-judgement_4f4d0fed0592.html.gz');
  t.match(judgement, {
    type: 'dictionary_results',
    syllables: 'judg·ment',
    phonetic: '/ˈjəjmənt/',
    word_type: 'noun',
    definitions: [
      'the ability to make considered decisions or come to sensible conclusions.',
      'a misfortune or calamity viewed as a divine punishment.',
    ],
    examples: ['an error of judgment', 'the crash had been a judgment on the parents for wickedness'],
  });
  const synonyms = judgement?.synonyms as string[];
  t.same(synonyms.slice(0, 3), ['discernment', 'acumen', 'shrewdness'], 'synonyms in the page’s order');
  t.ok(synonyms.includes('retribution'), 'the second sense’s synonyms too');
  // "cistern": a plain noun query whose page also carries the dictionary box; its senses have no example.
  const cistern = answerBoxOf('serp/websearcher/2024-03-13_cistern_81f344a9684a.html.gz');
  t.match(cistern, {
    type: 'dictionary_results',
    syllables: 'cis·tern',
    phonetic: '/ˈsistərn/',
    word_type: 'noun',
    definitions: [
      'a tank for storing water, especially one supplying taps or as part of a flushing toilet.',
      'an underground reservoir for rainwater.',
    ],
    synonyms: ['tank', 'reservoir', 'container', 'vat', 'butt'],
  });
  t.notOk(cistern && 'examples' in cistern, 'no examples where the page gives none');
});

t.test('answer box › the translate widget is translation_result', { skip: fixturesMissing() }, async (t) => {
  // "monitor" searched in Vietnamese (2023): English → Vietnamese, language names in the interface language.
  t.same(answerBoxOf('serp/nimble-google-scraper-ruby-goose97/monitor_50_links.html.gz'), {
    type: 'translation_result',
    translation: {
      source: { text: 'monitor', language: 'Tiếng Anh', language_code: 'en' },
      target: { text: 'màn hình', language: 'Tiếng Việt', language_code: 'vi' },
    },
  });
  // "nimble" searched in Thai (2022): the target comes with its romanisation.
  t.same(answerBoxOf('serp/nimble-elixir-topnimble/keyword_with_top_adwords.html.gz'), {
    type: 'translation_result',
    translation: {
      source: { text: 'nimble', language: 'อังกฤษ', language_code: 'en' },
      target: { text: 'ว่องไว', language: 'ไทย', language_code: 'th', pronunciation: 'Ẁxngwị' },
    },
  });
});

t.test('answer box › a featured snippet that is a list', { skip: fixturesMissing() }, async (t) => {
  // "programming courses" (2023-07, Vietnamese interface): the snippet is a heading and eight list items cut short by
  // "Mục khác..." ("More items..."), then its source result; no snippet text. The same layout holds 2025 pages.
  t.same(answerBoxOf('serp/nimble-google-scraper-ruby-goose97/programming_courses_3_top_1_bottom.html.gz'), {
    type: 'organic_result',
    list: [
      'Python Programming Course.',
      'R Programming Course.',
      'SAS Programming Course.',
      'Java Programming Course.',
      'JavaScript Course.',
      'AngularJS Course.',
      'C Programming Course.',
      'Linux Programming Course.',
    ],
    link: 'https://intellipaat.com/blog/best-computer-programming-courses/',
    title: '10 Best Programming Courses to learn in 2023 - Intellipaat',
    displayed_link: 'https://intellipaat.com › blog › best-computer-programmi...',
  });
});

t.test('answer box › a list in a People also ask answer is not the answer box', async (t) => {
  // Hand-written after the structure above: an answer carries the same help link and a list of its own.
  const help = '<a href="/url?url=https://support.google.com/websearch?p%3Dfeatured_snippets%26hl%3Den">About</a>';
  const answer =
    '<div class="MjjYud"><div class="related-question-pair" data-q="Which courses?"><block-component><ul>' +
    `<li>Python.</li><li>Java.</li></ul><div class="yuRUbf"><a href="https://a.example.org/"><h3>Courses</h3></a></div>${help}` +
    '</block-component></div></div>';
  t.equal(answerBox(loadDom(`<html><body>${answer}</body></html>`)), undefined);
  // The same block outside People also ask is the answer box.
  const snippet = answer.replace(' class="related-question-pair" data-q="Which courses?"', '');
  t.same(answerBox(loadDom(`<html><body>${snippet}</body></html>`)), {
    type: 'organic_result',
    list: ['Python.', 'Java.'],
    link: 'https://a.example.org/',
    title: 'Courses',
  });
});
