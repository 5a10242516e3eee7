import { z } from 'zod';
import { processEnv } from './env.js';
import { ConfigError, type EnvironmentValues, type Settings, settingsOf, VARIABLE_GROUPS } from './schema.js';

/** The test suite's and the benchmarks' settings: the schema's `tests` group, each under its field name. */
export type TestSettings = Settings<typeof VARIABLE_GROUPS.tests>;

const TestEnvironment = z.object(VARIABLE_GROUPS.tests);

/**
 * Reads the `tests` group (schema.ts) from the environment as it is now: the test runner sets SERP_TEST_BUILT while
 * it runs, so a caller reads it when it needs it, never once at load.
 */
export const loadTestSettings = (env: Readonly<Record<string, string | undefined>> = processEnv()): TestSettings => {
  const parsed = TestEnvironment.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((issue) => `${String(issue.path[0])} ${issue.message}`));
  }
  return settingsOf(VARIABLE_GROUPS.tests, parsed.data as EnvironmentValues);
};
