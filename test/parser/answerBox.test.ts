import t from 'tap';
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
