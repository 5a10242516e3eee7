import { type Command, InvalidArgumentError } from 'commander';
import { allProjections } from '../../../projections/index.js';
import { auditUsage } from '../../app/audit.js';
import { loadConfig } from '../../compose/config.js';
import { openCore } from '../../compose/embedded.js';
import { rebuildReadModels } from '../../projector/projector.js';

const monthArg = (v: string) => {
  if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(v)) throw new InvalidArgumentError('month must be YYYY-MM, e.g. 2026-11');
  return v.replace('-', '');
};

/** `projections rebuild` and `audit usage`: offline maintenance on the data directory. */
export const registerMaintenanceCommands = (program: Command) => {
  program
    .command('projections')
    .description('read-model maintenance')
    .command('rebuild')
    .description('drop every read model and replay the event log into them (stop the service first)')
    .option('--data <dir>', 'data directory (SERP_DATA_DIR)')
    .action(async (o: { data?: string }) => {
      const core = await openCore(loadConfig(process.env, { dataDir: o.data }));
      try {
        await core.projector.stop();
        const r = await rebuildReadModels(core.eventStore, core.readModels, allProjections);
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
    .option(
      '--grace-seconds <n>',
      'a reservation younger than this may belong to a submit in flight',
      (v) => Number(v),
      300,
    )
    .option('--data <dir>', 'data directory (SERP_DATA_DIR)')
    .option('--json', 'print JSON')
    .action(
      async (o: {
        month: string;
        key?: string;
        repair?: boolean;
        graceSeconds: number;
        data?: string;
        json?: boolean;
      }) => {
        const core = await openCore(loadConfig(process.env, { dataDir: o.data }));
        try {
          const report = await auditUsage({
            ...core,
            month: o.month,
            keyId: o.key,
            repair: o.repair,
            graceSeconds: o.graceSeconds,
          });
          if (o.json) return console.log(JSON.stringify(report, null, 2));
          if (!report.length) return console.log(`no usage in ${o.month}`);
          for (const k of report) {
            console.log(
              `${k.keyId} ${k.month}: reserved ${k.reserved}, released ${k.released}, charged jobs ${k.charged}, projected used ${k.projected}`,
            );
            for (const d of k.discrepancies) console.log(`  ! ${d.kind}${d.jobId ? ` ${d.jobId}` : ''}: ${d.detail}`);
          }
        } finally {
          await core.close();
        }
      },
    );
};
