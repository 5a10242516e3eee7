import { type Command, InvalidArgumentError } from 'commander';
import { keyView } from '../../api/keyView.js';
import { type ApplicationServices, composeApplication } from '../../compose/application.js';
import { openLocalCore } from '../../compose/dataDir.js';
import type { Core } from '../../compose/embedded/core.js';
import { loadConfig } from '../../config/config.js';
import { processEnv } from '../../config/env.js';
import { type AdminTarget, adminCall, adminTarget } from '../target.js';

const nonNegative = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('must be a non-negative integer');
  return n;
};
const positive = (v: string) => {
  const n = nonNegative(v);
  if (n === 0) throw new InvalidArgumentError('must be at least 1');
  return n;
};

interface Common {
  baseUrl?: string;
  adminToken?: string;
  data?: string;
  json?: boolean;
}

/**
 * Runs `viaApi` against the service `--base-url` names or the one running on the data directory, or `direct` on the
 * data directory when none runs (never with `--base-url`: a service that does not answer there is an error).
 */
const withTarget = async <T>(
  opts: Common,
  viaApi: (server: AdminTarget) => Promise<T>,
  direct: (core: Core, application: ApplicationServices) => Promise<T>,
) => {
  const config = loadConfig(processEnv(), { dataDir: opts.data });
  const server = await adminTarget(config, opts);
  if (server) return viaApi(server);
  const core = await openLocalCore(config);
  try {
    return await direct(core, composeApplication(core, config));
  } finally {
    await core.close();
  }
};

const print = (opts: Common, value: unknown, text: string) =>
  console.log(opts.json ? JSON.stringify(value, null, 2) : text);

export const registerKeysCommand = (program: Command) => {
  const keys = program.command('keys').description('mint, list, revoke API keys and change their limits');
  const common = (c: Command) =>
    c
      .option('--base-url <url>', 'admin api of a running service (default: the one running on the data directory)')
      .option('--admin-token <token>', 'its admin token (SERP_ADMIN_TOKEN; default: the one in the data directory)')
      .option('--data <dir>', 'data directory (SERP_DATA_DIR)')
      .option('--json', 'print JSON');

  common(keys.command('create'))
    .description('mint a key; its raw value is printed once and never stored')
    .requiredOption('--tier <tier>', 'free, starter, pro, enterprise (or one from SERP_TIERS)')
    .option('--label <label>', 'a note to recognise the key by')
    .option('--quota <n>', 'monthly quota (0 = unlimited)', nonNegative)
    .option('--rate <n>', 'submissions per minute', positive)
    .action(async (o: Common & { tier: string; label?: string; quota?: number; rate?: number }) => {
      const body = { tier: o.tier, label: o.label, monthly_quota: o.quota, rate_limit_per_min: o.rate };
      const created = (await withTarget(
        o,
        (s) => adminCall(s, 'POST', '/keys', body),
        async (core, { keys }) => {
          const c = await keys.create({
            tier: o.tier,
            label: o.label,
            monthlyQuota: o.quota,
            rateLimitPerMin: o.rate,
          });
          if (c.position) await core.projector.waitFor(c.position);
          return { ...keyView(core.queries.keys.byId(c.keyId)!), key: c.key };
        },
      )) as ReturnType<typeof keyView> & { key: string };
      print(
        o,
        created,
        `${created.key}\n\nkey id ${created.key_id} · tier ${created.tier} · quota ${created.monthly_quota || 'unlimited'}/month · ${created.rate_limit_per_min}/min\nThis is the only time the key is shown.`,
      );
    });

  common(keys.command('list'))
    .description('list keys (prefix, tier, limits, status); raw keys are never shown')
    .action(async (o: Common) => {
      const list = (await withTarget(
        o,
        async (s) => ((await adminCall(s, 'GET', '/keys')) as { keys: unknown[] }).keys,
        async (core) => core.queries.keys.all().map(keyView),
      )) as Array<ReturnType<typeof keyView>>;
      const rows = list.map(
        (k) =>
          `${k.key_id}  ${k.prefix}…  ${k.tier.padEnd(10)} ${String(k.monthly_quota).padStart(7)}/mo ${String(k.rate_limit_per_min).padStart(5)}/min  ${k.status}  ${k.label ?? ''}`,
      );
      print(o, list, rows.length ? rows.join('\n') : 'no keys yet: serp-api keys create --tier free');
    });

  common(keys.command('revoke <keyId>'))
    .description('revoke a key: its next request gets 401')
    .action(async (keyId: string, o: Common) => {
      const view = await withTarget(
        o,
        (s) => adminCall(s, 'POST', `/keys/${encodeURIComponent(keyId)}/revoke`),
        async (core, { keys }) => {
          const r = await keys.revoke(keyId);
          if (r.position) await core.projector.waitFor(r.position);
          return keyView(core.queries.keys.byId(keyId)!);
        },
      );
      print(o, view, `revoked ${keyId}`);
    });

  common(keys.command('limits <keyId>'))
    .description("change a key's tier, monthly quota or rate")
    .option('--tier <tier>', 'new tier')
    .option('--quota <n>', 'monthly quota (0 = unlimited)', nonNegative)
    .option('--rate <n>', 'submissions per minute', positive)
    .action(async function (
      this: Command,
      keyId: string,
      o: Common & { tier?: string; quota?: number; rate?: number },
    ) {
      if (o.tier === undefined && o.quota === undefined && o.rate === undefined) {
        this.error('error: give at least one of --tier, --quota, --rate', { code: 'serp.noChange' });
      }
      const view = (await withTarget(
        o,
        (s) =>
          adminCall(s, 'PATCH', `/keys/${encodeURIComponent(keyId)}`, {
            tier: o.tier,
            monthly_quota: o.quota,
            rate_limit_per_min: o.rate,
          }),
        async (core, { keys }) => {
          const r = await keys.changeLimits(keyId, {
            tier: o.tier,
            monthlyQuota: o.quota,
            rateLimitPerMin: o.rate,
          });
          if (r.position) await core.projector.waitFor(r.position);
          return keyView(core.queries.keys.byId(keyId)!);
        },
      )) as ReturnType<typeof keyView>;
      print(
        o,
        view,
        `${keyId}: ${view.tier}, ${view.monthly_quota || 'unlimited'}/month, ${view.rate_limit_per_min}/min`,
      );
    });
};
