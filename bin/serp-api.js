#!/usr/bin/env node
// Runs the compiled CLI (npm run build); from a checkout without a build, runs the TypeScript sources through tsx.
import { existsSync } from 'node:fs';

const dist = new URL('../dist/services/cli/main.js', import.meta.url);
if (existsSync(dist)) {
  await import(dist.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(new URL('../services/cli/main.ts', import.meta.url).href);
}
