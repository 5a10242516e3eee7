import { type Command, InvalidArgumentError, Option } from 'commander';
import { besideService, openLocalCore, requireEventStore } from '../../compose/dataDir.js';
import { type Config, loadConfig } from '../../config/config.js';
import { processEnv } from '../../config/env.js';
import {
  type ReparseEntry,
  type ReparseReport,
  type ReparseSelection,
  reparseSearches,
} from '../../crawler/reparse.js';
import { localService } from '../target.js';

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/** `--since`: a date or date-time (ISO 8601), read as UTC unless it names its offset; 2026-02-30 is refused. */
const sinceArg = (v: string) => {
  const text = v.trim();
  const m = ISO_DATE.exec(text);
  const day = m ? new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))) : undefined;
  const real = m && day && day.getUTCMonth() === Number(m[2]) - 1 && day.getUTCDate() === Number(m[3]);
  const ms = real ? Date.parse(text.includes(':') && !m[4] ? `${text}Z` : text) : Number.NaN;
  if (Number.isNaN(ms)) {
    throw new InvalidArgumentError('must be an ISO 8601 date or date-time, e.g. 2026-01-31 or 2026-01-31T12:00:00Z');
  }
  return new Date(ms).toISOString();
};

/** With a service running on the data directory: append beside it, and wait until it serves the new results. */
const reparseBesideService = async (config: Config, selection: ReparseSelection, onJob: (e: ReparseEntry) => void) => {
  const { result, projected } = await besideService(config, ({ eventStore, blobStore, handle }) =>
    reparseSearches({ eventStore, blobStore, handle, onJob }, selection),
  );
  if (!projected) {
    console.error('warning: the running service has not projected the new results yet; they show once it has');
  }
  return result;
};

/** No service running: this process is the only writer and projects the new events itself before it closes. */
const reparseAlone = async (config: Config, selection: ReparseSelection, onJob: (e: ReparseEntry) => void) => {
  const core = await openLocalCore(config);
  try {
    const report = await reparseSearches(
      {
        eventStore: core.eventStore,
        blobStore: core.blobStore,
        handle: core.handle,
        onJob,
      },
      selection,
    );
    if (report.position !== undefined) await core.projector.waitFor(report.position);
    return report;
  } finally {
    await core.close();
  }
};

const line = (e: ReparseEntry) =>
  e.outcome === 'reparsed'
    ? `reparsed ${e.jobId}: parser ${e.from} → ${e.to}, organic results ${e.organic.before} → ${e.organic.after}`
    : `${e.outcome} ${e.jobId}: ${e.reason}`;

const summary = (r: ReparseReport) =>
  `re-parsed ${r.reparsed}, skipped ${r.skipped}, failed ${r.failed} (parser ${r.parserVersion})`;

export const registerReparseCommand = (program: Command) => {
  program
    .command('reparse')
    .description('re-parse stored raw HTML with the current parser and append SearchReparsed (no crawl, no quota)')
    .addOption(new Option('--job <id>', 'only this job').conflicts('since'))
    .option('--since <date>', 'only jobs completed at or after this date (ISO 8601, UTC by default)', sinceArg)
    .option('--force', 're-parse jobs already parsed by the current parser version too')
    .option('--data <dir>', 'data directory (SERP_DATA_DIR)')
    .option('--json', 'print the report as JSON')
    .action(async (o: { job?: string; since?: string; force?: boolean; data?: string; json?: boolean }) => {
      const config = loadConfig(processEnv(), { dataDir: o.data });
      requireEventStore(config);
      const selection: ReparseSelection = { jobId: o.job, since: o.since, force: o.force };
      // Skipped jobs are only counted: a full run over a large store would print one line per job otherwise.
      const onJob = (e: ReparseEntry) => {
        if (!o.json && e.outcome !== 'skipped') console.log(line(e));
      };
      const report = (await localService(config))
        ? await reparseBesideService(config, selection, onJob)
        : await reparseAlone(config, selection, onJob);
      if (o.json) console.log(JSON.stringify(report, null, 2));
      else {
        if (o.job && report.skipped) console.log(line(report.jobs[0]));
        console.log(summary(report));
      }
      if (report.failed > 0) process.exitCode = 1;
    });
};
