import { type Command, InvalidArgumentError } from 'commander';
import { instantProblem } from '../../../contracts/isoInstant.js';
import { allProjections } from '../../../projections/index.js';
import { auditUsage, type KeyAudit } from '../../application/audit.js';
import type { SweepReport } from '../../application/retention.js';
import { besideService, openLocalCore, requireEventStore, trackAppends } from '../../compose/dataDir.js';
import { runRetentionSweep } from '../../compose/retention.js';
import { type Config, loadConfig } from '../../config/config.js';
import { processEnv } from '../../config/env.js';
import { defaultOf } from '../../config/schema.js';
import { rebuildReadModels } from '../../projector/projector.js';
import { localService, serviceRunningError } from '../target.js';

const monthArg = (v: string) => {
  if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(v)) throw new InvalidArgumentError('month must be YYYY-MM, e.g. 2026-11');
  return v.replace('-', '');
};

const secondsArg = (v: string) => {
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || n < 0) {
    throw new InvalidArgumentError('must be a number of seconds, 0 or more');
  }
  return n;
};

interface AuditOptions {
  month: string;
  key?: string;
  repair?: boolean;
  graceSeconds: number;
}

/**
 * Beside a running service: no projector of our own (it would apply the service's events a second time). The log is
 * read from the shared event store, releases go through the command handler, and we wait for the service's
 * projector to pass them before printing.
 */
const auditBesideService = async (config: Config, o: AuditOptions) => {
  const { result, projected } = await besideService(config, (shared) =>
    auditUsage({
      eventStore: shared.eventStore,
      queries: shared.queries,
      handle: shared.handle,
      month: o.month,
      keyId: o.key,
      repair: o.repair,
      graceSeconds: o.graceSeconds,
      caughtUp: (position) => shared.projected(position, 5_000),
    }),
  );
  if (!projected) {
    console.error('warning: the running service has not projected the releases yet; /v1/usage shows them once it has');
  }
  return result;
};

/** No service running: this process opens the data directory with its own projector and projects its releases. */
const auditAlone = async (config: Config, o: AuditOptions) => {
  const core = await openLocalCore(config);
  try {
    const tracked = trackAppends(core.handle);
    const report = await auditUsage({
      eventStore: core.eventStore,
      queries: core.queries,
      handle: tracked.handle,
      month: o.month,
      keyId: o.key,
      repair: o.repair,
      graceSeconds: o.graceSeconds,
      caughtUp: (position) => core.projector.waitFor(position),
    });
    const last = tracked.last();
    if (last !== undefined) await core.projector.waitFor(last);
    return report;
  } finally {
    await core.close();
  }
};

const printAudit = (month: string, report: KeyAudit[]) => {
  if (!report.length) return console.log(`no usage in ${month}`);
  for (const k of report) {
    console.log(
      `${k.keyId} ${k.month}: reserved ${k.reserved}, released ${k.released}, charged jobs ${k.charged}, projected used ${k.projected}`,
    );
    for (const d of k.discrepancies) console.log(`  ! ${d.kind}${d.jobId ? ` ${d.jobId}` : ''}: ${d.detail}`);
  }
};

const daysArg = (v: string) => {
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || n < 0) {
    throw new InvalidArgumentError('must be a number of days, 0 or more (fractions allowed: 0.5 is twelve hours)');
  }
  return n;
};

/** an ISO date or instant, held to the calendar as the API holds its dates (docs/api.md): 2026-02-30 is refused */
const instantArg = (v: string) => {
  const problem = instantProblem(v);
  if (problem) throw new InvalidArgumentError(problem);
  const at = new Date(v);
  if (at.getTime() > Date.now()) throw new InvalidArgumentError('must not be in the future');
  return at;
};

const printSweep = (r: SweepReport) =>
  console.log(`jobs submitted before ${r.cutoff}: purged ${r.purged} jobs, deleted ${r.blobsDeleted} blobs`);

/** `projections rebuild` (offline only) and `audit usage` (offline, or beside a running service). */
export const registerMaintenanceCommands = (program: Command) => {
  program
    .command('retention')
    .description('data past SERP_RETENTION_DAYS')
    .command('sweep')
    .description(
      'delete the raw HTML, results and read-model rows of every ended job older than the retention (the service also does it hourly)',
    )
    .option('--data <dir>', 'data directory (SERP_DATA_DIR)')
    .option(
      '--days <n>',
      `retention in days (default SERP_RETENTION_DAYS, ${defaultOf('SERP_RETENTION_DAYS')})`,
      daysArg,
    )
    .option(
      '--before <instant>',
      'instead of --days: every ended job submitted before this ISO date or instant',
      instantArg,
    )
    .action(async (o: { data?: string; days?: number; before?: Date }) => {
      const config = loadConfig(processEnv(), { dataDir: o.data });
      requireEventStore(config);
      if (o.days !== undefined && o.before) throw new InvalidArgumentError('give --days or --before, not both');
      const days = o.days ?? config.retentionDays;
      const before = o.before;
      if (await localService(config)) {
        // beside the service: its projector drops the rows; we wait for it, then compact
        const { result } = await besideService(config, (shared) =>
          runRetentionSweep({
            ...shared,
            compact: shared.compactReadModels,
            projected: (position) => shared.projected(position, 15_000),
            retentionDays: days,
            before,
          }),
        );
        return printSweep(result);
      }
      const core = await openLocalCore(config);
      try {
        const r = await runRetentionSweep({
          ...core,
          compact: () => core.readModels.compact(),
          projected: (position) => core.projector.waitFor(position),
          retentionDays: days,
          before,
        });
        printSweep(r);
      } finally {
        await core.close();
      }
    });

  program
    .command('projections')
    .description('read-model maintenance')
    .command('rebuild')
    .description('drop every read model and replay the event log into them (stop the service first)')
    .option('--data <dir>', 'data directory (SERP_DATA_DIR)')
    .action(async (o: { data?: string }) => {
      const config = loadConfig(processEnv(), { dataDir: o.data });
      requireEventStore(config);
      // The running service's projector writes read.db while we drop and refill it: refuse, never race it.
      const running = await localService(config);
      if (running) throw serviceRunningError(config, running, 'run projections rebuild');
      const core = await openLocalCore(config);
      try {
        await core.projector.stop();
        const r = await rebuildReadModels(core.eventStore, core.readModels, allProjections, core.blobStore);
        console.log(`rebuilt ${allProjections.length} read models from ${r.events} events (position ${r.position})`);
      } finally {
        await core.close();
      }
    });

  program
    .command('audit')
    .description('replay the log and check it against the read models')
    .command('usage')
    .description('per key: reserved, released, charged jobs, projected usage and discrepancies for a month')
    .requiredOption('--month <YYYY-MM>', 'calendar month (UTC)', monthArg)
    .option('--key <keyId>', 'only this key')
    .option('--repair', 'append the releases the audit finds missing')
    .option('--grace-seconds <n>', 'a reservation younger than this may belong to a submit in flight', secondsArg, 300)
    .option('--data <dir>', 'data directory (SERP_DATA_DIR)')
    .option('--json', 'print JSON')
    .action(async (o: AuditOptions & { data?: string; json?: boolean }) => {
      const config = loadConfig(processEnv(), { dataDir: o.data });
      requireEventStore(config);
      const report = (await localService(config)) ? await auditBesideService(config, o) : await auditAlone(config, o);
      if (o.json) console.log(JSON.stringify(report, null, 2));
      else printAudit(o.month, report);
    });
};
