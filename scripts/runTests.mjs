#!/usr/bin/env node
// Runs the whole suite with tap and ends with the one line CI reads: "N passed, N failed, N skipped".
// Counts every assertion at every depth, so a file that runs no assertion shows up as 0, never as a pass.
import { spawn } from 'node:child_process';
import { Parser } from 'tap-parser';

const args = process.argv.slice(2);
const child = spawn('npx', ['tap', '--reporter=tap', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
const counts = { pass: 0, fail: 0, skip: 0 };
const failures = [];

const watch = (parser, path, isRoot = false) => {
  parser.on('assert', (res) => {
    if (res.skip || res.todo) counts.skip++;
    else if (res.ok) counts.pass += isRoot ? 0 : 1;
    else {
      counts.fail++;
      failures.push([...path, res.name].join(' › '));
    }
  });
  parser.on('child', (c) => watch(c, [...path, c.name]));
};
const root = new Parser();
watch(root, [], true);
child.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  root.write(chunk);
});
child.on('close', (code) => {
  root.end();
  if (failures.length) console.log(`\nFailed:\n${failures.map((f) => `  - ${f}`).join('\n')}`);
  console.log(`\n${counts.pass} passed, ${counts.fail} failed, ${counts.skip} skipped`);
  process.exit(code ?? 1);
});
