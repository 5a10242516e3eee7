import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createGzip, gzipSync } from 'node:zlib';
import t from 'tap';
import { fixturesMissing, listSerpPages, readFixture } from '../support/fixtures.js';
import { cli, pollJob, removeDir, startService, submit, tempDataDir } from '../support/service.js';

/**
 * Bodies are bounded while they stream (docs/security.md#bodies-are-bounded-while-they-stream), as a user meets it:
 * a service whose Google answers with gzip bombs fails those searches with a clear reason and stays up, its memory
 * where it was.
 */
const MB = 2 ** 20;
const missing = fixturesMissing();

/** 256 MB of zeros, gzipped a megabyte at a time (about 250 kB) */
const gzipBomb = async (): Promise<Buffer> => {
  const gz = createGzip({ level: 9 });
  const out: Buffer[] = [];
  gz.on('data', (c: Buffer) => out.push(c));
  const zeros = Buffer.alloc(MB);
  for (let i = 0; i < 256; i++) if (!gz.write(zeros)) await once(gz, 'drain');
  gz.end();
  await once(gz, 'end');
  return Buffer.concat(out);
};

/** a process's resident set and its peak since the last reset, from the kernel (Linux) */
const memoryOf = (pid: number) => {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? Number.NaN) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
};

t.test(
  'a service whose Google sends gzip bombs',
  { skip: missing ?? (process.platform !== 'linux' && 'Linux /proc only') },
  async (t) => {
    const bomb = await gzipBomb();
    const page = gzipSync(readFixture(listSerpPages()[0] ?? ''));
    const requests: string[] = [];
    const origin = createServer((req, res) => {
      const q = new URL(req.url ?? '/', 'http://x').searchParams.get('q') ?? '';
      requests.push(q);
      res.on('error', () => undefined);
      res.writeHead(200, { 'content-type': 'text/html; charset=UTF-8', 'content-encoding': 'gzip' });
      res.end(q.startsWith('bomb') ? bomb : page);
    });
    origin.listen(0, '127.0.0.1');
    await once(origin, 'listening');
    const data = tempDataDir();
    const svc = await startService(data, {
      SERP_GOOGLE_ORIGIN: `http://127.0.0.1:${(origin.address() as AddressInfo).port}`,
    });
    t.teardown(async () => {
      await svc.stop();
      origin.close();
      removeDir(data);
    });
    const { key } = JSON.parse(await cli(['keys', 'create', '--tier', 'pro', '--json', '--data', data])) as {
      key: string;
    };
    const search = async (keyword: string) => {
      const res = await submit(svc.url, key, { keyword, depth: 10 });
      const { job_id: jobId } = (await res.json()) as { job_id: string };
      const done = await pollJob(svc.url, key, jobId, 'json', 120_000);
      return {
        http: done.status,
        ...((await done.json()) as { status?: string; detail?: string; search_metadata?: { status: string } }),
      };
    };

    // the crawl's code loaded and its threads started, so that what follows counts the bombs only
    const warm = await search('warm up');
    t.equal(warm.search_metadata?.status, 'done', 'a real page is crawled');
    const pid = svc.child.pid ?? 0;
    const before = memoryOf(pid).rss;
    writeFileSync(`/proc/${pid}/clear_refs`, '5');

    const bombs = await Promise.all(['bomb one', 'bomb two', 'bomb three', 'bomb four'].map(search));
    for (const [i, answer] of bombs.entries()) {
      t.equal(answer.http, 200, `search ${i + 1}: a terminal answer, not an error status`);
      t.equal(answer.status, 'failed', `search ${i + 1}: failed`);
      t.match(
        answer.detail,
        /larger than any result page the crawler reads \(over 8 MB or 250,000 tags\); its quota was released/,
        `search ${i + 1}: the detail says why`,
      );
    }
    t.equal(requests.filter((q) => q.startsWith('bomb')).length, 4, 'each bomb fetched once: no retry');
    t.equal(svc.child.exitCode, null, 'the service is still up');
    t.equal((await fetch(`${svc.url}/health`)).status, 200, 'and answers');
    const after = memoryOf(pid);
    const mb = (n: number) => `${(n / MB).toFixed(1)} MB`;
    t.ok(after.peak - before <= 50 * MB, `RSS ${mb(before)} before, ${mb(after.peak)} at its peak`);
    t.ok(after.rss - before <= 50 * MB, `and ${mb(after.rss)} after (four bombs of 256 MB each)`);
  },
);
