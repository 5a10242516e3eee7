import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Command } from 'commander';
import t from 'tap';
import { DomainEvent, streams } from '../../contracts/events.js';
import { allProjections } from '../../projections/index.js';
import { commandModules } from '../../services/cli/commandModules.js';
import { createProgram } from '../../services/cli/program.js';
import { createV1Client } from '../../services/client/v1Client.js';
import { BACKGROUND_WORKERS } from '../../services/compose/backgroundWorkers.js';
import { ROLES } from '../../services/config/distributed.js';
import { VARIABLE_GROUPS } from '../../services/config/schema.js';
import { createMcpServer } from '../../services/mcp/server.js';
import { buildTestApp } from '../support/app.js';
import {
  bodyFields,
  codeBlockOf,
  codeSpans,
  foldersOf,
  listFindings,
  operationName,
  routeIn,
  sectionOf,
  serpNames,
  statusesIn,
  tableOf,
  treeOf,
} from '../support/docsInventory.js';
import { repositoryFiles } from '../support/docsRules.js';

/**
 * The documents list what the code defines, and stay true as it moves (docs/testing.md#the-documents): each list is
 * held against the code's own registry (the stream names, the event union, the projections, the background workers,
 * the folder tree, the MCP server's tools, the live OpenAPI) and a failure names what the document lacks or lists in
 * vain. docs/configuration.md is generated instead (test/unit/configDocs.test.ts).
 */
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');
const design = read('docs/design.md');
const architecture = read('docs/architecture.md');

/** the stream's name as the log spells it: `usage` of `usage-<keyId>-<month>` */
const streamNames = Object.values(streams).map(
  (make) => (make as (...ids: string[]) => string)('x', 'x').split('-')[0],
);
const eventTypes = DomainEvent.options.map((o) => o.shape.type.value as string);

t.test('the documents › design.md names every stream and every event', async (t) => {
  const rows = tableOf(design, 'streams-and-events', 'stream') ?? [];
  t.ok(rows.length > 0, 'docs/design.md#streams-and-events has its table');
  const listed = rows.flatMap((r) => codeSpans(r[0] ?? '').map((s) => /^([A-Za-z]+)-\{/.exec(s)?.[1] ?? s));
  t.ok(streamNames.length >= 10, `the code defines ${streamNames.length} streams`);
  t.same(listFindings('the streams table', listed, streamNames), [], 'each stream of `streams`, once');
  const events = rows.flatMap((r) => codeSpans(r[1] ?? '').map((s) => /^[A-Z][A-Za-z]+/.exec(s)?.[0] ?? s));
  t.same(listFindings('the streams table', events, eventTypes), [], 'each event of `DomainEvent`');
});

t.test('the documents › design.md names every read model, in its folder', async (t) => {
  const rows = tableOf(design, 'read-models', 'folder') ?? [];
  t.ok(rows.length > 0, 'docs/design.md#read-models has its table');
  const names = rows.flatMap((r) => codeSpans(r[1] ?? ''));
  const defined = allProjections.map((p) => p.name);
  t.ok(defined.length >= 20, `the projector applies ${defined.length} projections`);
  t.same(listFindings('the read models table', names, defined), [], 'each of `allProjections`');
  const folders = rows.map((r) => (codeSpans(r[0] ?? '')[0] ?? '').replace(/^projections\/|\/$/g, ''));
  t.same(listFindings('the read models table', folders, foldersOf(root, 'projections')), [], 'each folder');
  const misplaced = rows.flatMap((r) => {
    const folder = (codeSpans(r[0] ?? '')[0] ?? '').replace(/\/$/, '');
    const sources = readdirSync(join(root, folder), { recursive: true })
      .map(String)
      .filter((f) => f.endsWith('.ts'))
      .map((f) => read(join(folder, f)));
    return codeSpans(r[1] ?? '')
      .filter((name) => !sources.some((s) => s.includes(`name: '${name}'`)))
      .map((name) => `${name} is not defined in ${folder}/`);
  });
  t.same(misplaced, [], 'each view in the folder that defines it');
});

t.test('the documents › the folder trees name every folder', async (t) => {
  const trees = [
    {
      doc: 'docs/design.md#layout',
      tree: treeOf(codeBlockOf(design, 'layout') ?? ''),
      parents: ['domain', 'projections', 'services'],
      all: true,
    },
    {
      doc: 'docs/architecture.md#folders',
      tree: treeOf(codeBlockOf(architecture, 'folders') ?? ''),
      parents: ['services'],
      all: false,
    },
  ];
  const top = foldersOf(root, '.');
  for (const { doc, tree, parents, all } of trees) {
    const listed = (tree.get('') ?? []).map((p) => p.split('/')[0] ?? p);
    t.same(
      all ? listFindings(`${doc}`, listed, top) : listFindings(doc, listed, top).filter((f) => f.includes(' lists ')),
      [],
      `${doc}: ${all ? 'every top-level folder' : 'top-level folders that exist'}`,
    );
    for (const parent of parents) {
      t.ok(tree.has(parent), `${doc} lists what ${parent}/ holds`);
      t.same(
        listFindings(`${doc} (${parent}/)`, tree.get(parent) ?? [], foldersOf(root, parent)),
        [],
        `${doc}: ${parent}/`,
      );
    }
  }
});

t.test('the documents › architecture.md names every background worker', async (t) => {
  const rows = tableOf(architecture, 'background-workers', 'worker') ?? [];
  t.ok(rows.length > 0, 'docs/architecture.md#background-workers has its table');
  const listed = rows.flatMap((r) => codeSpans(r[0] ?? '').slice(0, 1));
  t.same(
    listFindings(
      'the workers table',
      listed,
      BACKGROUND_WORKERS.map((w) => w.name),
    ),
    [],
    'each of BACKGROUND_WORKERS',
  );
});

t.test('the documents › benchmarks.md names every bench', async (t) => {
  const files = readdirSync(join(root, 'test', 'bench')).filter((f) => f.endsWith('.ts'));
  const sources = files.map((f) => read(join('test', 'bench', f)));
  // a bench's helpers are imported by another bench (`from './compare.js'`) or started by one (`new URL('./readProbe.ts'`)
  const helper = (f: string) => {
    const name = f.replace(/\.ts$/, '');
    return sources.some((s) => s.includes(`from './${name}.js'`) || s.includes(`new URL('./${name}.ts'`));
  };
  const benches = files.filter((f) => !helper(f));
  t.ok(benches.length >= 20, `${benches.length} benches, ${files.length - benches.length} helpers`);
  const rows = tableOf(read('docs/benchmarks.md'), 'benchmarks', 'bench') ?? [];
  const listed = rows.map((r) => (codeSpans(r[0] ?? '')[0] ?? '').split(' ')[0] ?? '');
  t.same(listFindings('docs/benchmarks.md (its table of benches)', listed, benches), [], 'each bench of test/bench');
});

t.test('the documents › operations.md names every metric the service declares', async (t) => {
  // every prom-client metric of the service is declared with its name as a literal: `name: 'serp_…'`
  const declared = [...repositoryFiles(root)]
    .filter(([path, text]) => path.startsWith('services/') && text.includes("from 'prom-client'"))
    .flatMap(([, text]) => [...text.matchAll(/\bname: '(serp_[a-z0-9_]+)'/g)].map((m) => m[1] ?? ''));
  t.ok(declared.length >= 25, `${declared.length} metrics declared`);
  const rows = tableOf(read('docs/operations.md'), 'metrics-and-logs', 'metric') ?? [];
  const listed = rows
    .flatMap((r) => codeSpans(r[0] ?? ''))
    .filter((span) => !span.includes('*'))
    .map((span) => span.replace(/\{.*$/, ''));
  t.same(listFindings('docs/operations.md#metrics-and-logs', listed, declared), [], 'each metric, by name');
});

t.test('the documents › distributed.md names every role and every variable of distributed mode', async (t) => {
  const section = (sectionOf(read('docs/distributed.md'), 'roles') ?? []).join('\n');
  const rows = tableOf(read('docs/distributed.md'), 'roles', 'role') ?? [];
  t.same(
    listFindings(
      'docs/distributed.md#roles',
      rows.map((r) => r[0] ?? ''),
      ROLES,
    ),
    [],
    'each role, once',
  );
  const named = [...serpNames(section)].filter((n) => n in VARIABLE_GROUPS.distributed);
  t.same(
    listFindings('docs/distributed.md#roles', named, Object.keys(VARIABLE_GROUPS.distributed)),
    [],
    'each variable of the distributed group (services/config/schema.ts)',
  );
});

t.test('the documents › cli.md names every command', async (t) => {
  const program = createProgram();
  for (const register of new Set(await Promise.all(Object.values(commandModules).map((load) => load())))) {
    register(program);
  }
  const leaves = (c: Command, path: string[]): string[] =>
    c.commands.length === 0 ? [path.join(' ')] : c.commands.flatMap((s) => leaves(s, [...path, s.name()]));
  const defined = leaves(program, []);
  t.ok(defined.length >= 15, `${defined.length} commands`);
  const rows = tableOf(read('docs/cli.md'), 'the-command-line-serp-api', 'command') ?? [];
  // a span's leading words are the command (`keys limits ID …` → keys limits); `a\|b` is each of them
  const listed = rows.flatMap((r) =>
    codeSpans(r[0] ?? '').flatMap((span) => {
      const words: string[][] = [];
      for (const word of span.split(' ')) {
        if (!/^[a-z]+(?:\\?\|[a-z]+)*$/.test(word)) break;
        words.push(word.split(/\\?\|/));
      }
      return words.reduce<string[]>((paths, alts) => paths.flatMap((p) => alts.map((a) => `${p} ${a}`.trim())), ['']);
    }),
  );
  t.same(listFindings('docs/cli.md (its table of commands)', listed, defined), [], 'each command and subcommand');
});

t.test('the documents › mcp.md names every tool the MCP server registers', async (t) => {
  const v1 = createV1Client({
    baseUrl: 'http://127.0.0.1:9',
    apiKey: 'sk_unused',
    fetch: () => Promise.reject(new Error('listing tools calls no route')),
  });
  const server = createMcpServer({ client: v1, version: '0' });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'docs-inventory', version: '0' });
  await server.connect(serverSide);
  await client.connect(clientSide);
  t.teardown(async () => {
    await client.close();
    await server.close();
  });
  const { tools } = await client.listTools();
  t.ok(tools.length >= 4, `the server registers ${tools.length} tools`);
  const rows = tableOf(read('docs/mcp.md'), 'tools', 'tool') ?? [];
  const listed = rows.flatMap((r) => codeSpans(r[0] ?? ''));
  t.same(
    listFindings(
      'docs/mcp.md#tools',
      listed,
      tools.map((x) => x.name),
    ),
    [],
    'each tool, once',
  );
});

t.test('the documents › the route tables match the live OpenAPI', async (t) => {
  const { app } = await buildTestApp(t);
  const openapi = (await app.inject({ url: '/openapi.json' })).json() as {
    paths: Record<
      string,
      Record<
        string,
        {
          responses: Record<string, unknown>;
          requestBody?: { content: Record<string, { schema?: { properties?: object } }> };
        }
      >
    >;
  };
  const operations = new Map(
    Object.entries(openapi.paths).flatMap(([path, ops]) =>
      Object.entries(ops)
        .filter(([method]) => method !== 'head')
        .map(([method, op]) => [operationName(method, path), op] as const),
    ),
  );
  t.ok(operations.size >= 50, `the OpenAPI has ${operations.size} operations`);
  const api = read('docs/api.md');

  t.test('api.md#every-route lists every operation', async (t) => {
    const rows = tableOf(api, 'every-route', 'route') ?? [];
    const listed = rows.flatMap((r) => codeSpans(r[0] ?? '').map(routeIn));
    t.notOk(listed.includes(undefined), 'each row names one `METHOD /path`');
    t.same(listFindings('docs/api.md#every-route', listed as string[], operations.keys()), [], 'each, once');
    t.equal(new Set(listed).size, listed.length, 'none twice');
  });

  t.test('the table at the top of api.md names routes that exist', async (t) => {
    const rows = tableOf(api, 'the-native-api-v1', 'route') ?? [];
    t.ok(rows.length >= 5, `${rows.length} rows`);
    const paths = [...operations.keys()].map((o) => o.split(' ')[1] ?? '');
    const gone = rows.flatMap((r) =>
      codeSpans(r[0] ?? '').filter((span) => {
        const route = routeIn(span);
        if (route) return !operations.has(route);
        const prefix = /^(\/[^…\s]+)…$/.exec(span)?.[1];
        return !prefix || !paths.some((p) => p.startsWith(prefix));
      }),
    );
    t.same(gone, [], 'every `METHOD /path` and `/prefix…` it names is served');
  });

  t.test('operations.md#admin-writes lists every admin write with its body and statuses', async (t) => {
    const rows = tableOf(read('docs/operations.md'), 'admin-writes', 'route') ?? [];
    const writes = [...operations.keys()].filter((o) => / \/admin/.test(o) && !o.startsWith('GET '));
    t.ok(writes.length >= 5, `${writes.length} admin writes`);
    const listed = rows.map((r) => routeIn(codeSpans(r[0] ?? '')[0] ?? '') ?? r[0] ?? '');
    t.same(listFindings('docs/operations.md#admin-writes', listed, writes), [], 'each write');
    for (const [i, name] of listed.entries()) {
      const op = operations.get(name);
      if (!op) continue;
      const row = rows[i] ?? [];
      t.same(statusesIn(row[2] ?? ''), Object.keys(op.responses).sort(), `${name}: the statuses the OpenAPI declares`);
      const schema = Object.values(op.requestBody?.content ?? {})[0]?.schema;
      t.same(bodyFields(row[1] ?? ''), Object.keys(schema?.properties ?? {}).sort(), `${name}: its body's fields`);
    }
  });
});

t.test('the documents › every SERP_ name they mention is defined in the code', async (t) => {
  const defined = new Set([...repositoryFiles(root).values()].flatMap((text) => [...serpNames(text)]));
  t.ok(defined.has('SERP_DATA_DIR') && defined.has('SERP_RATE_LIMITED'), 'variables and error codes are among them');
  const docs = ['README.md', ...readdirSync(join(root, 'docs')).map((n) => `docs/${n}`)].filter((p) =>
    p.endsWith('.md'),
  );
  const unknown = docs.flatMap((doc) =>
    [...serpNames(read(doc))].filter((n) => !defined.has(n)).map((n) => `${doc}: ${n}`),
  );
  t.same(unknown, [], 'no variable, code or stream the code no longer has');
});

t.test('the documents › the inventory checks catch what they are for', async (t) => {
  const doc = [
    '# Doc',
    '',
    '## Streams',
    '',
    '```',
    '## not a heading',
    '```',
    '',
    '| stream | events |',
    '|---|---|',
    '| `apiKey-{keyId}` | `ApiKeyIssued {keyId}`, `Gone` |',
    '| `a\\|b` | x |',
    '',
    '## Next',
  ].join('\n');
  t.same(sectionOf(doc, 'streams')?.length, 10, 'a section ends at the next heading, not at a # in a code block');
  t.same(
    tableOf(doc, 'streams', 'stream'),
    [
      ['`apiKey-{keyId}`', '`ApiKeyIssued {keyId}`, `Gone`'],
      ['`a|b`', 'x'],
    ],
    'its table',
  );
  t.same(tableOf(doc, 'streams', 'route'), undefined, 'no table under another header');
  t.same(
    listFindings('the table', ['apiKey', 'gone'], ['apiKey', 'usage']),
    ['the table lacks usage', 'the table lists gone, which the code does not define'],
    'a list missing one name and naming another the code lacks',
  );
  const tree = treeOf(
    [
      'contracts/    schemas          domain/  deciders',
      'public/admin/ the dashboard',
      'services/     I/O:',
      '  api/ crawler/  these two, then a description naming other/',
      '  cli/        commands; dev/ holds tooling',
      '                continued with deep/ folders',
      ' odd/  one space is no level',
    ].join('\n'),
  );
  t.same(
    Object.fromEntries(tree),
    { '': ['contracts', 'public/admin', 'services'], services: ['api', 'crawler', 'cli'] },
    'a tree: leading folder names only, children under the last parent',
  );
  t.same(statusesIn('201 the key; 400, 401, 413 or 503 (`Retry-After: 2`, 1,000 a minute, 0.5 s)'), [
    '201',
    '400',
    '401',
    '413',
    '503',
  ]);
  t.same(bodyFields('`{tier, label?, monthly_quota?}` (JSON)'), ['label', 'monthly_quota', 'tier']);
  t.same(bodyFields('none'), []);
  t.equal(routeIn('GET /v1/search/{job_id}?output=html\\|json'), 'GET /v1/search/{job_id}');
  t.equal(routeIn('/v1/monitors…'), undefined, 'a prefix is no route');
  t.same(
    [...serpNames('`SERP_<AREA>_<WHAT>`, SERP_DATA_DIR=x, `SERP_*`, SERP_RATE_LIMITED.')],
    ['SERP_DATA_DIR', 'SERP_RATE_LIMITED'],
  );
});
