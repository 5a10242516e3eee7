import { Environment, GROUPS, type Group, VARIABLES, variableDocs } from './schema.js';

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/**
 * docs/configuration.md, made from the schema (schema.ts): one table per group, every variable with its default and
 * what it does. `npm run docs:config` writes it; test/unit/configDocs.test.ts fails when the file differs.
 */
export const renderConfigurationDoc = (): string => {
  const lines = [
    '# Configuration',
    '',
    '<!-- Generated from services/config/schema.ts by `npm run docs:config`: edit the schema, not this file. -->',
    '',
    'Every setting is an environment variable. `serp-api serve`, `serp-api-mcp` and the CLI read them through one',
    'schema (`services/config/schema.ts`), the only code that reads the environment; a wrong value stops the process',
    'at start with one line per problem (`serp-api: config: SERP_X …`, exit 2 for `serve --role`). A blank value is',
    'an unset one. Command-line flags (`--port`, `--host`, `--data`, `--base-url`, `--key`) win over the variables.',
    'Which thread or process reads what is in [architecture.md](architecture.md).',
    '',
  ];
  for (const group of Object.keys(GROUPS) as Group[]) {
    const names = VARIABLES.filter((name) => variableDocs.get(Environment.shape[name])?.group === group);
    if (names.length === 0) continue;
    lines.push(`## ${GROUPS[group]}`, '', '| Variable | Default | What it does |', '| --- | --- | --- |');
    for (const name of names) {
      const doc = variableDocs.get(Environment.shape[name]);
      if (!doc) throw new Error(`${name} has no documentation in services/config/schema.ts`);
      lines.push(`| \`${name}\` | ${cell(doc.default)} | ${cell(doc.description)} |`);
    }
    lines.push('');
  }
  return `${lines.join('\n').trimEnd()}\n`;
};
