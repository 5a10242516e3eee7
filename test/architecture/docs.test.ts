import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import {
  anchorsOf,
  linkFindings,
  reader,
  readmeFindings,
  repositoryFiles,
  sourceFindings,
} from '../support/docsRules.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const read = reader(root);
const docs = readdirSync(join(root, 'docs'))
  .filter((name) => name.endsWith('.md'))
  .map((name) => `docs/${name}`)
  .sort();
const show = (findings: Array<{ file: string; line: number; problem: string }>) =>
  findings.map((f) => `${f.file}:${f.line} ${f.problem}`);

t.test('the documents › source files cite only docs/ sections that exist', async (t) => {
  const files = repositoryFiles(root);
  t.ok(files.size > 200, `read ${files.size} source files`);
  t.ok(files.has('package.json') && files.has('services/api/app.ts'), 'code and package.json are among them');
  t.notOk(
    [...files.keys()].some((f) => f.startsWith('docs/') || f === 'README.md'),
    'the documents themselves are not',
  );
  t.same(
    show(sourceFindings(files, read)),
    [],
    'no citation of an issue, a note outside the repository, or a gone section',
  );
});

t.test('the documents › the README is short and leads to every document', async (t) => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  t.ok(docs.length >= 10, `docs/ holds ${docs.length} documents`);
  t.same(show(readmeFindings(readme, docs)), [], 'at most 200 lines, and a link to each document of docs/');
});

t.test('the documents › every link between them resolves, sections included', async (t) => {
  const findings = ['README.md', ...docs].flatMap((file) => linkFindings(file, read(file) ?? '', read));
  t.same(show(findings), [], 'no broken link or anchor');
});

t.test('the documents › the checks catch what they are for', async (t) => {
  // paths built from `d`, so that this file cites no document itself
  const d = 'docs';
  const fakeDocs = new Map([[`${d}/api.md`, '# The API\n\n## Poll and read\n\n```sh\n# not a heading\n```\n']]);
  const fakeRead = (path: string) => fakeDocs.get(path);
  const cites = (line: string) => sourceFindings(new Map([['services/x.ts', line]]), fakeRead).length;
  const design = ['DESIGN', 'md'].join('.');
  t.equal(cites(`/** shape as in ${design} §2 */`), 1, 'the design note outside the repository');
  t.equal(cites(`// see ${['STYLE', 'md'].join('.')}`), 1, 'the style note outside the repository');
  t.equal(cites(`// stores bytes (${['iss', 'ue 14'].join('')}, item 2)`), 1, 'an issue number');
  t.equal(cites(`// ${['Iss', 'ue 9'].join('')}: hardening`), 1, 'an issue number, capitalised');
  t.equal(
    cites(`// envelope (${[`${d}/serpapi`, 'reference.md'].join('-')} §2)`),
    2,
    'a shared reference, gone here too',
  );
  t.equal(cites(`// statuses (${d}/api.md#poll-and-read)`), 0, 'a section that exists');
  t.equal(cites(`// statuses (${d}/api.md#statuses)`), 1, 'a section that does not exist');
  t.equal(cites(`// not-a-heading (${d}/api.md#not-a-heading)`), 1, 'a comment inside a code block is no section');
  t.equal(cites(`// see ${d}/gone.md`), 1, 'a document that does not exist');
  t.equal(cites(`const url = 'https://example.com/${d}/gone.md';`), 0, "another site's docs are not ours");

  const long = `${'line\n'.repeat(201)}`;
  t.same(
    show(readmeFindings(long, [`${d}/api.md`])).map((s) => s.replace(/:\d+/, '')),
    ['README.md has 201 lines, over 200', `README.md does not link ${d}/api.md`],
    'a long README that forgets a document',
  );
  t.same(readmeFindings(`See [the API](${d}/api.md#poll-and-read).\n`, [`${d}/api.md`]), [], 'a linked one passes');
  t.same(
    show(linkFindings('README.md', `[a](${d}/api.md#nope) [b](${d}/none.md) [c](https://x.org/y.md)`, fakeRead)),
    [
      `README.md:1 links ${d}/api.md#nope, but ${d}/api.md has no section #nope`,
      `README.md:1 links ${d}/none.md, but ${d}/none.md does not exist`,
    ],
    'broken links are reported, other sites are not checked',
  );
  t.same(
    [...anchorsOf('# A b\n## A b\n### Ports & adapters (`x`)\n')],
    ['a-b', 'a-b-1', 'ports--adapters-x'],
    "GitHub's anchors",
  );
});
