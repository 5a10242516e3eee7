import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import t from 'tap';
import { createSqliteEventStore } from '../../services/adapters/eventStore/sqlite.js';
import { createCollector } from './eventStoreHelpers.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const ACKS_BEFORE_KILL = 400;

interface Ack {
  stream: string;
  version: number;
  position: number;
}

/** runs the appender in its own process and SIGKILLs it once it has acknowledged enough appends */
const appendUntilKilled = (file: string) =>
  new Promise<Ack[]>((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'sqliteCrashChild.ts'), file], {
      cwd: path.join(here, '..', '..'),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const acks: Ack[] = [];
    let buffered = '';
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.stdout.on('data', (chunk) => {
      buffered += chunk;
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        const [stream, version, position] = line.split(' ');
        acks.push({ stream, version: Number(version), position: Number(position) });
      }
      if (acks.length >= ACKS_BEFORE_KILL && child.exitCode === null) child.kill('SIGKILL');
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (signal === 'SIGKILL') resolve(acks);
      else reject(new Error(`appender exited on its own (code ${code}): ${stderr}`));
    });
  });

t.test('SqliteEventStore › crash', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'serp-es-crash-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'events.db');
  const watcher = createSqliteEventStore({ path: file, pollIntervalMs: 50 });
  const seen = createCollector();
  const subscription = watcher.subscribeToAll(0, seen.handler);

  const acks = await appendUntilKilled(file);
  t.ok(acks.length >= ACKS_BEFORE_KILL, `${acks.length} appends acknowledged before kill -9`);

  await t.test('a subscriber in another process saw every acknowledged event', async (t) => {
    const last = Math.max(...acks.map((a) => a.position));
    await seen.until((r) => r.length > 0 && r[r.length - 1].globalPosition >= last, 'the last acknowledged event');
    const positions = new Set(seen.received.map((e) => e.globalPosition));
    t.ok(
      acks.every((a) => positions.has(a.position)),
      'every acknowledged position delivered live',
    );
    await subscription.stop();
    await watcher.close();
  });

  await t.test('after reopening, every acknowledged event is there, intact', async (t) => {
    const raw = new Database(file);
    t.equal(raw.pragma('integrity_check', { simple: true }), 'ok', 'SQLite integrity check passes');
    raw.close();

    const store = createSqliteEventStore({ path: file });
    t.teardown(() => store.close());
    const all = await store.readAll();
    const byPosition = new Map(all.map((e) => [e.globalPosition, e]));
    const missing = acks.filter((a) => {
      const e = byPosition.get(a.position);
      return !e || e.streamName !== a.stream || e.streamVersion !== a.version;
    });
    t.same(missing, [], 'no acknowledged append is lost');
    t.same(
      all.map((e) => e.globalPosition),
      all.map((_, i) => i + 1),
      'global positions have no gap',
    );
    const torn = all.filter((e) => {
      const data = e.data as { w: number; version: number; payload: string };
      return (
        data.payload.length !== 6000 ||
        e.streamName !== `crash-${data.w}` ||
        e.streamVersion !== data.version ||
        e.metadata.correlationId !== `w${data.w}-v${data.version}`
      );
    });
    t.same(torn, [], 'every stored event is whole and where it belongs');
    const next = await store.appendToStream(acks[0].stream, [{ type: 'AfterCrash', data: {} }], {
      expectedVersion: 'stream_exists',
    });
    t.ok(next.lastGlobalPosition > all.length, 'the store accepts appends after the crash');
  });
});
