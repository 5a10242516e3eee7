import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

const PROBE = new URL('./readProbe.ts', import.meta.url);
/** reads a second: a busy client's polling, well under what the idle service answers (~9,000 a second here) */
export const PROBE_RATE = 200;

/** what readProbe.ts reports when its stdin closes */
export interface ProbeReport {
  /** each read's ms */
  times: number[];
  /** bytes a read took, on average (the answer is read in full) */
  bytes: number;
  failures: number;
  failureKinds: Record<string, number>;
}

/**
 * readProbe.ts reading `url` at PROBE_RATE in a process of its own while `phase` runs (used by readUnderCrawl.ts and
 * webhookLatency.ts). Its event loop does only this: the bench's own (submits, polls) would otherwise add its delays
 * to the reads. Resolves with the probe's report and what `phase` returned.
 */
export const runReadProbe = async <T>(url: string, key: string, phase: () => Promise<T>) => {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(PROBE), url, key, String(PROBE_RATE)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let out = '';
  const ready = new Promise<void>((resolve) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolve();
    });
  });
  const exited = once(child, 'exit');
  await Promise.race([ready, exited]);
  const phaseResult = await phase();
  child.stdin.end();
  const [code] = (await exited) as [number | null];
  if (code !== 0) throw new Error(`read probe exited with ${code}`);
  return { report: JSON.parse(out.slice(out.indexOf('\n') + 1)) as ProbeReport, phaseResult };
};
