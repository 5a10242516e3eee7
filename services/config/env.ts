/**
 * The process's environment. The only module of the service that reads `process.env`: everything else gets its
 * settings from the loaders in this folder, which parse it with the one schema (schema.ts, docs/configuration.md).
 */
export const processEnv = (): Readonly<Record<string, string | undefined>> => process.env;
