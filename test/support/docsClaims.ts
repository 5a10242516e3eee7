/**
 * Claims the documents make about how the code is built, as checks over the sources (test/architecture/docsClaims.test.ts):
 * each function takes the repository's files (path → text) and returns what breaks the claim, one line each, naming
 * the file and what it should do instead. The claims are in docs/architecture.md (background workers, configuration)
 * and docs/style.md#where-code-goes.
 */

export type Files = ReadonlyMap<string, string>;

/** comments out of the way: a claim is about code, and a comment may name what it must not do */
const code = (text: string) => text.replace(/\/\*[\s\S]*?\*\/|(?<![:'"`\\])\/\/.*$/gm, '');

const servicesCode = (files: Files) =>
  [...files].filter(([path]) => path.startsWith('services/') && path.endsWith('.ts')).map(([p, t]) => [p, code(t)]);

/** the modules that may follow the log themselves: the one follower (createReactor) and the projector */
const LOG_READERS = new Set(['services/reactor/reactor.ts', 'services/projector/projector.ts']);
/** the log's ports and adapters define subscriptions; they follow nothing */
const isStore = (path: string) => path.startsWith('services/adapters/') || path.startsWith('services/ports/');

/**
 * "Every log follower is a reactor": no module of services/ subscribes to the log, or keeps a checkpoint of its own,
 * but createReactor and the projector.
 */
export const followerFindings = (files: Files): string[] =>
  servicesCode(files).flatMap(([path, text]) => {
    if (LOG_READERS.has(path as string) || isStore(path as string)) return [];
    const found: string[] = [];
    if (/\.subscribeToAll\(/.test(text as string)) {
      found.push(`${path}: subscribes to the log itself: follow it with createReactor (services/reactor/reactor.ts)`);
    }
    if (/\.commit\(\s*\[\s*\]\s*,/.test(text as string)) {
      found.push(`${path}: keeps a checkpoint of its own: a reactor keeps it (services/reactor/reactor.ts)`);
    }
    return found;
  });

/**
 * "Each reactor runs the conformance suite": every reactor the services create is named in REACTORS (the names the
 * conformance suite's record of cases is keyed by), every name there is created somewhere, and the suite walks them.
 */
export const reactorFindings = (files: Files, names: readonly string[]): string[] => {
  const created = new Map<string, string>();
  const found: string[] = [];
  for (const [path, text] of servicesCode(files)) {
    for (const m of (text as string).matchAll(/createReactor(?:<[^>]*>)?\(\s*\{\s*name:\s*'([^']+)'/g)) {
      created.set(m[1] as string, path as string);
    }
    const calls = [...(text as string).matchAll(/createReactor(?:<[^>]*>)?\(/g)].length;
    const named = [...(text as string).matchAll(/createReactor(?:<[^>]*>)?\(\s*\{\s*name:\s*'/g)].length;
    if (path !== 'services/reactor/reactor.ts' && calls > named) {
      found.push(`${path}: a createReactor call whose definition does not start with its name (name: '…')`);
    }
  }
  for (const [name, path] of created) {
    if (!names.includes(name)) found.push(`${path}: reactor ${name} is not in REACTORS (services/reactor/reactor.ts)`);
  }
  for (const name of names) {
    if (!created.has(name)) found.push(`REACTORS names ${name}, which no module of services/ creates`);
  }
  const suite = files.get('test/conformance/reactors.test.ts') ?? '';
  if (!/Record<ReactorName,/.test(suite) || !/Object\.keys\(REACTORS\)/.test(suite)) {
    found.push('test/conformance/reactors.test.ts: its cases are not a record over REACTORS, walked by name');
  }
  return found;
};

/** files that may read a SERP_ variable from process.env, and why */
export const ENV_READERS: Readonly<Record<string, string>> = {
  'services/config/env.ts': 'the one reader of the environment',
  'scripts/runTests.mjs': 'plain JavaScript that node runs before any TypeScript loads: it sets SERP_TEST_BUILT',
  'test/unit/serviceClient.test.ts': 'saves the variable it unsets around its own test, and puts it back',
};

/**
 * "Every setting goes through one schema": no file reads a `SERP_` variable from process.env but env.ts (and the few
 * ENV_READERS), and every `SERP_` variable a file reads from an environment or sets in one is declared in the schema.
 */
export const settingFindings = (files: Files, declared: readonly string[]): string[] => {
  const found: string[] = [];
  for (const [path, raw] of files) {
    if (!/\.(ts|mjs|js)$/.test(path) || path.startsWith('dist/')) continue;
    const text = code(raw);
    const reads = [...text.matchAll(/(?<!delete\s)process\.env(?:\.|\[['"])(SERP_[A-Z0-9_]+)\b(?!['"]?\]?\s*=[^=])/g)];
    if (reads.length > 0 && !(path in ENV_READERS)) {
      found.push(`${path}: reads ${reads[0]?.[1]} from process.env: read it through the schema (services/config/)`);
    }
    const named = [
      ...text.matchAll(/(?:\benv|process\.env)\.(SERP_[A-Z0-9_]+)/g),
      ...text.matchAll(/(?:^|[{,])\s*(SERP_[A-Z0-9_]+)\s*:/gm),
    ].map((m) => m[1] as string);
    for (const name of new Set(named)) {
      if (!declared.includes(name)) found.push(`${path}: ${name} is not declared in services/config/schema.ts`);
    }
  }
  return found;
};

/**
 * "A consumer has no default of its own": outside services/config/, no module gives a configuration field (`fields`:
 * Config's, each a variable's name in camelCase) a number or a flag of its own (`config.field ?? 5`, `{ field = 5 }`), and the
 * job queue's adapters take their options from the configuration (jobQueueOptions), never from literals.
 */
export const defaultFindings = (files: Files, fields: readonly string[]): string[] => {
  const found: string[] = [];
  const names = fields.join('|');
  // a fallback after reading the field (`config.field ?? 5`), or a default where it is taken (`{ field = 5 }`); a string
  // is what an unset variable means to that consumer, which the schema words (`unsetMeans`), not a second default
  const own = new RegExp(
    `(?:\\.(${names})\\s*\\?\\?|[{,(]\\s*(${names})\\s*=(?!=|>))\\s*(-?\\d|true\\b|false\\b)`,
    'g',
  );
  for (const [path, text] of servicesCode(files)) {
    if ((path as string).startsWith('services/config/')) continue;
    for (const m of (text as string).matchAll(own)) {
      found.push(
        `${path}: gives ${m[1] ?? m[2]} a default of its own: the schema's is the one (services/config/schema.ts)`,
      );
    }
    for (const m of (text as string).matchAll(/create(?:InProcess|JetStream)JobQueue\(([\s\S]{0,300}?)\)/g)) {
      if (!/jobQueueOptions\(/.test(m[1] as string)) {
        found.push(`${path}: a job queue whose options are not jobQueueOptions(config) (services/compose/)`);
      }
    }
  }
  return found;
};

/**
 * "A new webhook event type … the end-to-end test delivers it": test/e2e/webhooks.test.ts waits for a delivery of
 * every type of the registry (`ofType(r, path, type)` in a wait's predicate), so a type the recipe added but the test
 * does not make happen fails here at once, not at the end of the end-to-end run.
 */
export const webhookTypeFindings = (e2e: string, types: readonly string[]): string[] =>
  types
    .filter((type) => !new RegExp(`ofType\\([^,]+, '[^']+', '${type.replace('.', '\\.')}'\\)`).test(e2e))
    .map((type) => `test/e2e/webhooks.test.ts: no subtest waits for a ${type} delivery (docs/webhooks.md)`);
