import { execFile } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import openapiTS, { astToString } from 'openapi-typescript';
import t from 'tap';
import ts from 'typescript';
import { fixturesMissing } from '../support/fixtures.js';
import { startStack } from '../support/service.js';

const run = promisify(execFile);
const here = dirname(fileURLToPath(import.meta.url));

/**
 * What a user of the API does with /openapi.json: lint it with Redocly's recommended rules, generate a typed
 * client with openapi-typescript, type-check a program written against it, and run that program's submit/poll/usage
 * flow (openapi-fetch) against a listening service.
 */
const flowProgram = `import createClient from 'openapi-fetch';
import type { paths } from './schema.js';

const [baseUrl, key] = process.argv.slice(2);
const client = createClient<paths>({ baseUrl, headers: { 'X-API-Key': key } });

const submitted = await client.POST('/v1/search', {
  body: { keyword: 'coffee', location: 'Austin, Texas, United States', device: 'desktop' },
});
if (!submitted.data || !('job_id' in submitted.data)) throw new Error('submit: ' + JSON.stringify(submitted.error));
const jobId: string = submitted.data.job_id;

let organic = -1;
for (let i = 0; i < 300 && organic < 0; i++) {
  const polled = await client.GET('/v1/search/{job_id}', { params: { path: { job_id: jobId }, query: { output: 'json' } } });
  if (polled.response.status === 200 && polled.data && 'organic_results' in polled.data) {
    organic = (polled.data.organic_results ?? []).length;
  } else if (polled.response.status !== 202) {
    throw new Error('poll: ' + polled.response.status);
  } else await new Promise((r) => setTimeout(r, 100));
}
const usage = await client.GET('/v1/usage');
const used: number | undefined = usage.data?.used_this_month;
console.log(JSON.stringify({ submitStatus: submitted.response.status, jobId, organic, used }));
`;

t.test('the live OpenAPI document, as a client generator sees it', { skip: fixturesMissing() }, async (t) => {
  const { svc, mintKey } = await startStack(t);
  const source = await (await fetch(`${svc.url}/openapi.json`)).text();

  t.test('redocly lint (recommended rules) › no errors', async (t) => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source, absoluteRef: `${svc.url}/openapi.json`, config });
    const errors = problems.filter((p) => p.severity === 'error');
    t.same(
      errors.map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`),
      [],
      'no lint errors',
    );
    t.comment(`${problems.length - errors.length} warnings`);
  });

  t.test('openapi-typescript + openapi-fetch › a typed program type-checks and runs the flow', async (t) => {
    const dir = join(here, '..', '.generated', `client-${process.pid}`);
    mkdirSync(dir, { recursive: true });
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'schema.ts'), astToString(await openapiTS(source)));
    writeFileSync(join(dir, 'flow.ts'), flowProgram);

    const program = ts.createProgram([join(dir, 'flow.ts')], {
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      types: ['node'],
    });
    const diagnostics = ts
      .getPreEmitDiagnostics(program)
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    t.same(diagnostics, [], 'the program written against the generated types type-checks');

    const { key } = await mintKey(['--tier', 'pro']);
    const { stdout } = await run(process.execPath, ['--import', 'tsx', join(dir, 'flow.ts'), svc.url, key], {
      cwd: dir,
    });
    const out = JSON.parse(stdout.trim().split('\n').pop()!) as {
      submitStatus: number;
      jobId: string;
      organic: number;
      used: number;
    };
    t.equal(out.submitStatus, 202, 'submitted');
    t.match(out.jobId, /^[0-9a-f]{24}$/);
    t.ok(out.organic > 50, `the finished job has its organic results (${out.organic})`);
    t.equal(out.used, 1, 'usage counts the search');
  });
});
