import t from 'tap';
import {
  joinMembers,
  jsonBytes,
  knownJsonParts,
  memberTexts,
  rememberJson,
  rememberMembers,
  serialiseDoc,
} from '../../services/knownJson.js';

const joinedMemberTexts = (value: Record<string, unknown>) => joinMembers(memberTexts(value));

t.test('serialiseDoc is JSON.stringify for documents with nothing known', async (t) => {
  for (const doc of [null, 3, 'text', [1, { a: 2 }], { a: 1, b: { c: [1, 2] }, d: 'x\u0000y' }, {}]) {
    t.same(serialiseDoc(doc), { json: JSON.stringify(doc), spliced: false });
  }
});

t.test('a top-level value with known text is written as that text, not serialised again', async (t) => {
  const result = { organic_results: [{ position: 1, title: 'café "quoted"', link: 'https://example.com/' }] };
  const text = JSON.stringify(result);
  rememberJson(result, text);
  const doc = { jobId: 'j1', status: 'done', result, pages: [{ start: 0 }], note: 'known-json lookalike \u0000' };
  t.ok(serialiseDoc(doc).spliced, 'says it put known text in');
  const out = serialiseDoc(doc).json;
  t.equal(out, JSON.stringify(doc), 'the same text JSON.stringify makes');
  t.same(JSON.parse(out), doc, 'and it reads back as the document');

  // proof that the kept text is what goes in: a value registered with a text of its own
  const marked = { a: 1 };
  rememberJson(marked, '{"a":1,"from":"kept text"}');
  t.same(JSON.parse(serialiseDoc({ x: 'before', marked, y: 'after' }).json), {
    x: 'before',
    marked: { a: 1, from: 'kept text' },
    y: 'after',
  });
  t.equal(
    serialiseDoc({ nested: { marked } }).json,
    JSON.stringify({ nested: { marked } }),
    'only the top level is looked at',
  );
});

t.test('the joined member texts are JSON.stringify, and each object member is remembered', async (t) => {
  const result = {
    organic_results: [{ position: 1, title: 'Ünïcode "q" \u2028', link: 'https://e.com/', missing: undefined }],
    serp_features: { top_stories: [{ title: 't' }], empty: {} },
    ai_overview: undefined,
    information: { total_results: 12, query_displayed: 'x' },
    count: 3,
    nothing: null,
  };
  const text = joinedMemberTexts(result);
  t.equal(text, JSON.stringify(result), 'byte for byte');
  t.same(knownJsonParts({ organic_results: result.organic_results }), [
    '{"organic_results":',
    JSON.stringify(result.organic_results),
    '}',
  ]);
  t.equal(joinedMemberTexts({}), '{}');
});

t.test('an answer embedding known members is encoded from their text, to the same bytes', async (t) => {
  const result = {
    organic_results: [{ position: 1, title: 'café', link: 'https://e.com/' }],
    serp_features: { related_searches: [{ query: 'q' }] },
    information: { total_results: 5 },
  };
  joinedMemberTexts(result);
  const answer = {
    search_metadata: { id: 'j1', status: 'done', note: 'a "quoted" \u0000 value' },
    organic_results: result.organic_results,
    serp_features: result.serp_features,
  };
  const bytes = jsonBytes(answer);
  t.ok(Buffer.isBuffer(bytes), 'bytes, not a string of the whole answer');
  t.equal(bytes.toString(), JSON.stringify(answer), 'the same JSON');
  t.equal(jsonBytes({ a: [1] }), '{"a":[1]}', 'nothing known: JSON.stringify');
});

t.test('a structured clone remembers the texts made of the original, the whole and each member', async (t) => {
  const original = {
    organic_results: [{ position: 1, title: 'café', link: 'https://e.com/' }],
    serp_features: { related_searches: [{ query: 'q' }] },
    information: { total_results: 5 },
  };
  const members = memberTexts(original);
  const clone = structuredClone(original);
  t.equal(knownJsonParts({ result: clone }), undefined, 'a clone has no known text of its own');
  rememberMembers(clone, members);
  t.same(serialiseDoc({ jobId: 'j', result: clone }), {
    json: JSON.stringify({ jobId: 'j', result: original }),
    spliced: true,
  });
  t.same(knownJsonParts({ organic_results: clone.organic_results }), [
    '{"organic_results":',
    JSON.stringify(original.organic_results),
    '}',
  ]);
});
