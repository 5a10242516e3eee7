import { readFileSync } from 'node:fs';
import t from 'tap';
import { renderConfigurationDoc } from '../../services/config/docs.js';
import { Environment, VARIABLES, variableDocs } from '../../services/config/schema.js';

/**
 * docs/configuration.md is generated from the schema: a variable added, renamed or redescribed without
 * `npm run docs:config` fails here, and so does a variable without a default and a description.
 */
t.test('configuration › docs/configuration.md is what the schema generates', async (t) => {
  const onDisk = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
  t.equal(onDisk, renderConfigurationDoc(), 'run `npm run docs:config` and commit docs/configuration.md');
});

t.test('configuration › every variable has a default and a description, and the page names each once', async (t) => {
  const page = renderConfigurationDoc();
  for (const name of VARIABLES) {
    const doc = variableDocs.get(Environment.shape[name]);
    t.ok(doc?.default && doc.description.length > 10, `${name} is documented`);
    t.equal(page.split(`| \`${name}\` |`).length - 1, 1, `${name} has one row`);
  }
  t.ok(
    VARIABLES.every((name) => /^SERP_[A-Z0-9_]+$/.test(name)),
    'every name is SERP_*',
  );
});
