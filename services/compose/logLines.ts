const LEVELS: Record<string, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 };

/**
 * The workers' log lines in the same JSON shape as the HTTP logs (pino's: level, time, pid, msg, fields), one line
 * each on stdout, at `info` and filtered by SERP_LOG_LEVEL; off where the service's logger is off.
 */
export const jsonLines = (logLevel: string, enabled = true) => {
  const threshold = LEVELS[logLevel] ?? 30;
  if (!enabled || threshold > LEVELS.info || logLevel === 'silent') return undefined;
  return (msg: string, extra: Record<string, unknown> = {}) => {
    process.stdout.write(`${JSON.stringify({ level: 30, time: Date.now(), pid: process.pid, ...extra, msg })}\n`);
  };
};
