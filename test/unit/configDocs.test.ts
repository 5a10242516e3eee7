import { readFileSync } from 'node:fs';
import t from 'tap';
import { renderConfigurationDoc, shownDefault } from '../../services/config/docs.js';
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
    t.ok(shownDefault(name) && doc && doc.description.length > 10, `${name} is documented`);
    t.equal(page.split(`| \`${name}\` |`).length - 1, 1, `${name} has one row`);
  }
  t.ok(
    VARIABLES.every((name) => /^SERP_[A-Z0-9_]+$/.test(name)),
    'every name is SERP_*',
  );
});

t.test('configuration › a default is the parser’s: words only for a variable the parser leaves unset', async (t) => {
  for (const name of VARIABLES) {
    const schema = Environment.shape[name];
    const words = variableDocs.get(schema)?.unsetMeans;
    if (words === undefined) continue;
    t.equal(schema.parse(undefined), undefined, `${name}: its words (${words}) describe no value the parser returns`);
  }
  t.equal(shownDefault('SERP_ROUTE_COOLDOWN_S'), '60', 'a value: what the parser returns when unset');
  t.equal(shownDefault('SERP_WEBHOOK_ALLOW_HTTP'), '0', 'a flag: as it is set');
  t.equal(shownDefault('SERP_TIERS'), 'free, starter, pro, enterprise', 'a map: its names');
  t.equal(shownDefault('SERP_PARSE_THREADS'), 'one per core, one fewer with the pipeline thread', 'derived: in words');
});
