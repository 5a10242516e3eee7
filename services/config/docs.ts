import { Environment, GROUPS, type Group, VARIABLE_GROUPS, type VARIABLES, variableDocs } from './schema.js';

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** a parsed default as a reader sets it: a flag as 1 or 0, a list or a map by its names */
const shown = (value: unknown): string => {
  if (value === undefined) return '–';
  if (typeof value === 'boolean') return value ? '1' : '0';
  if (Array.isArray(value)) return value.length > 0 ? value.join(', ') : '–';
  if (typeof value === 'object' && value !== null) return Object.keys(value).join(', ');
  return String(value);
};

/**
 * A variable's default as docs/configuration.md shows it: what its parser returns when it is unset, or, for a
 * variable without one, the words its declaration gives (schema.ts).
 */
export const shownDefault = (name: (typeof VARIABLES)[number]): string => {
  const schema = Environment.shape[name];
  const fallback = schema.parse(undefined);
  return fallback === undefined ? (variableDocs.get(schema)?.unsetMeans ?? '–') : shown(fallback);
};

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
    const names = Object.keys(VARIABLE_GROUPS[group]) as (typeof VARIABLES)[number][];
    if (names.length === 0) continue;
    lines.push(`## ${GROUPS[group]}`, '', '| Variable | Default | What it does |', '| --- | --- | --- |');
    for (const name of names) {
      const doc = variableDocs.get(Environment.shape[name]);
      if (!doc) throw new Error(`${name} has no documentation in services/config/schema.ts`);
      lines.push(`| \`${name}\` | ${cell(shownDefault(name))} | ${cell(doc.description)} |`);
    }
    lines.push('');
  }
  return `${lines.join('\n').trimEnd()}\n`;
};
