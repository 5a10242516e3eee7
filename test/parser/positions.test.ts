import t from 'tap';
import { parse, positionMarks } from '../../parser/index.js';
import { fixturesMissing, listSerpPages, readFixtureText } from '../support/fixtures.js';

t.test('positionMarks', async (t) => {
  t.test('marks the start tag of the element each result was read from, and nothing else', async (t) => {
    const html =
      '<html><body><div id="rso"><div class="g"><a href="https://example.com/a"><h3>Alpha</h3></a><cite>example.com</cite></div>' +
      '<div class="g"><a href="https://example.com/b"><h3>Beta</h3></a></div></div></body></html>';
    const { outcome, marks, html: marked } = positionMarks(html, { captureAio: false });
    t.equal(outcome.kind, 'serp', 'the page is a SERP');
    const organic = marks.filter((m) => m.target.kind === 'organic');
    t.same(
      organic.map((m) => m.target),
      [
        { kind: 'organic', index: 0 },
        { kind: 'organic', index: 1 },
      ],
      'one mark per organic result, in rank order',
    );
    t.equal(marked.replace(/ data-serp-k\d+/g, ''), html, 'the page is unchanged but for the marks');
    t.match(
      marked,
      /<div data-serp-k0 class="g"><a href="https:\/\/example.com\/a">/,
      "the first result's box is marked",
    );
  });

  t.test(
    'on every fixture SERP, marks every organic result and leaves what the parser reads unchanged',
    {
      skip: fixturesMissing(),
    },
    async (t) => {
      const problems: string[] = [];
      let serps = 0;
      for (const path of listSerpPages()) {
        const page = readFixtureText(path);
        const { outcome, marks, html } = positionMarks(page, { captureAio: true });
        if (outcome.kind !== 'serp') continue;
        serps += 1;
        const organic = marks.filter((m) => m.target.kind === 'organic').length;
        if (organic !== outcome.serp.organic_results.length)
          problems.push(`${path}: ${organic} of ${outcome.serp.organic_results.length} organic results marked`);
        for (const m of marks) {
          const count = html.match(new RegExp(` ${m.attribute}(?=[\\s/>])`, 'g'))?.length ?? 0;
          if (count !== 1) problems.push(`${path}: ${m.attribute} appears ${count} times`);
        }
        const again = parse(html, { captureAio: true });
        if (JSON.stringify(again) !== JSON.stringify(outcome))
          problems.push(`${path}: the marked page parses otherwise`);
      }
      t.ok(serps > 100, `${serps} fixture SERPs checked`);
      t.same(problems, [], 'no problems');
    },
  );
});
