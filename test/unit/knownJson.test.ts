import t from 'tap';
import { rememberJson, stringifyDoc } from '../../services/knownJson.js';

t.test('stringifyDoc is JSON.stringify for documents with nothing known', async (t) => {
  for (const doc of [null, 3, 'text', [1, { a: 2 }], { a: 1, b: { c: [1, 2] }, d: 'x\u0000y' }, {}]) {
    t.equal(stringifyDoc(doc), JSON.stringify(doc));
  }
});

t.test('a top-level value with known text is written as that text, not serialised again', async (t) => {
  const result = { organic_results: [{ position: 1, title: 'café "quoted"', link: 'https://example.com/' }] };
  const text = JSON.stringify(result);
  rememberJson(result, text);
  const doc = { jobId: 'j1', status: 'done', result, pages: [{ start: 0 }], note: 'known-json lookalike \u0000' };
  const out = stringifyDoc(doc);
  t.equal(out, JSON.stringify(doc), 'the same text JSON.stringify makes');
  t.same(JSON.parse(out), doc, 'and it reads back as the document');

  // proof that the kept text is what goes in: a value registered with a text of its own
  const marked = { a: 1 };
  rememberJson(marked, '{"a":1,"from":"kept text"}');
  t.same(JSON.parse(stringifyDoc({ x: 'before', marked, y: 'after' })), {
    x: 'before',
    marked: { a: 1, from: 'kept text' },
    y: 'after',
  });
  t.equal(
    stringifyDoc({ nested: { marked } }),
    JSON.stringify({ nested: { marked } }),
    'only the top level is looked at',
  );
});
