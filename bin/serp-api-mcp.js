#!/usr/bin/env node
// The MCP server on stdio (SERP_API_BASE_URL, SERP_API_KEY): the compiled one after `npm run build`, else the
// TypeScript sources through tsx. Nothing but the protocol goes to stdout.
import { existsSync } from 'node:fs';

const dist = new URL('../dist/services/runtime/mcpStdio.js', import.meta.url);
if (existsSync(dist)) {
  await import(dist.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(new URL('../services/runtime/mcpStdio.ts', import.meta.url).href);
}
