import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { Test } from 'tap';
import { findNatsServer, type NatsServers, startNatsServers } from '../../services/cli/dev/natsServer.js';
import { loadTestSettings } from '../../services/config/tests.js';

/**
 * Why NATS tests cannot run here, or undefined when they can. Under CI=true a missing or too old nats-server throws:
 * .ci/run installs one, so a skip there would hide a broken install.
 */
export const natsUnavailable = (): string | undefined => {
  const found = findNatsServer();
  if (!found.problem) return undefined;
  if (process.env.CI === 'true') throw new Error(`${found.problem}: CI requires it`);
  return found.problem;
};

/** Real nats-server processes on loopback for one test (file); stopped and removed at its teardown. */
export const natsServers = async (t: Test, count = 1): Promise<NatsServers> => {
  const dir = mkdtempSync(join(tmpdir(), 'serp-nats-'));
  const servers = await startNatsServers({ count, dir, log: loadTestSettings().natsLog ? console.error : undefined });
  t.teardown(async () => {
    await servers.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  return servers;
};

export const natsConnect = (servers: NatsServers | string): Promise<NatsConnection> =>
  connect({ servers: (typeof servers === 'string' ? servers : servers.urls).split(','), maxReconnectAttempts: -1 });

/**
 * One nats-server for a test file, or undefined when this machine has none: then the whole file is a skip with the
 * reason (tap's `plan(0, reason)`), never a pass. The preamble every NATS conformance file shares.
 */
export const natsServerOrSkip = async (t: Test): Promise<NatsServers | undefined> => {
  const unavailable = natsUnavailable();
  if (!unavailable) return natsServers(t, 1);
  t.plan(0, unavailable);
  return undefined;
};
