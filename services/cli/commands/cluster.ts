import { join, resolve } from 'node:path';
import { type Command, InvalidArgumentError } from 'commander';
import { defaultOf } from '../../config/schema.js';
import { startLocalCluster } from '../dev/cluster.js';
import { readClusterState, removeClusterState, stopCluster, writeClusterState } from '../dev/clusterState.js';

const count = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 16) throw new InvalidArgumentError('a whole number from 1 to 16');
  return n;
};

const seconds = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 300) throw new InvalidArgumentError('a whole number of seconds, 1 to 300');
  return n;
};

const portNumber = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 65000) throw new InvalidArgumentError('a port from 1 to 65000');
  return n;
};

/**
 * `serp-api cluster up`: a distributed deployment on loopback, stopped with Ctrl-C, SIGTERM or SIGHUP (a closed
 * terminal), or by `serp-api cluster down` from another terminal (docs/distributed.md#a-cluster-on-one-machine).
 */
export const registerClusterCommand = (program: Command) => {
  const cluster = program.command('cluster').description('a local distributed deployment on loopback');
  cluster
    .command('up')
    .description(
      'start three nats-server nodes (JetStream, sync_interval: always) and the roles: api processes, crawlers, ' +
        'a dispatcher and a projector; Ctrl-C (or `cluster down`) stops everything',
    )
    .option('--dir <dir>', 'where the nodes and processes keep their data', '.cluster')
    .option(
      '--port <port>',
      'port of the first api process; the other processes take the next ones',
      portNumber,
      defaultOf('SERP_PORT'),
    )
    .option('--apis <n>', 'api processes', count, 2)
    .option('--crawlers <n>', 'crawler processes', count, 2)
    .option('--verbose', 'print every process log line')
    .action(async (o: { dir: string; port: number; apis: number; crawlers: number; verbose?: boolean }) => {
      const dir = resolve(o.dir);
      console.error(`starting nats-server ×3 and the roles under ${dir} …`);
      const c = await startLocalCluster({
        dir,
        apis: o.apis,
        crawlers: o.crawlers,
        basePort: o.port,
        log: o.verbose ? (line) => console.error(line) : undefined,
      });
      const lines = [
        `cluster up: ${c.apiUrls.join(' ')}`,
        `admin token: ${c.adminToken} (kept as adminToken in ${join(dir, 'secrets.json')})`,
        `nats: ${c.nats.urls}`,
        `cluster id: ${c.clusterId} (each process answers GET /health with instance_id ${c.clusterId}/<name>)`,
        ...c.processes.map((p) => `  ${p.name.padEnd(12)} ${p.roles.padEnd(11)} ${p.url} pid ${p.child?.pid}`),
        'Ctrl-C stops everything',
      ];
      writeClusterState(dir, c);
      console.log(lines.join('\n'));
      let stopping = false;
      const stop = () => {
        if (stopping) return;
        stopping = true;
        console.error('stopping the cluster …');
        c.stop().then(
          () => {
            removeClusterState(dir);
            process.exit(0);
          },
          (err) => {
            console.error(err);
            process.exit(1);
          },
        );
      };
      // a closed terminal (SIGHUP) stops the children too: left running, they would hold the ports and the nodes' data
      for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, stop);
    });

  cluster
    .command('down')
    .description('stop what `cluster up` started in --dir, from another terminal or after `up` itself died')
    .option('--dir <dir>', 'the folder `cluster up` was given', '.cluster')
    .option('--grace <seconds>', 'how long each process may take to stop before it is killed (1-300)', seconds, 15)
    .action(async (o: { dir: string; grace: number }) => {
      const dir = resolve(o.dir);
      const state = readClusterState(dir);
      if (!state) {
        console.error(`serp-api: no cluster started by \`cluster up\` in ${dir} (no cluster.json): nothing to stop`);
        process.exitCode = 1;
        return;
      }
      const report = await stopCluster(dir, state, o.grace * 1_000);
      if (report.upStopped) console.log(`stopped cluster up (pid ${state.pid}) and everything it started`);
      if (report.orphansStopped.length) console.log(`stopped, left running: ${report.orphansStopped.join(', ')}`);
      if (!report.upStopped && report.orphansStopped.length === 0) console.log(`nothing was running under ${dir}`);
      if (report.survivors.length) {
        console.error(`serp-api: still running after SIGKILL: ${report.survivors.join(', ')}`);
        process.exitCode = 1;
      }
    });
};
