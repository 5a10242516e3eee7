// The soak's event-loop probe (docs/operations.md#the-soak), loaded into each service process with `node --import`:
// it measures the main thread's event-loop delay with Node's own monitorEventLoopDelay and appends, once a second,
// that second's distribution to SOAK_PROBE_DIR/<pid>.jsonl. The main thread is the one that answers HTTP (the write
// side runs on the pipeline thread in embedded mode, in other processes in a cluster). Every thread (worker threads
// inherit the flag) also appends, every 10 s, its own V8 heap and the external memory its isolate accounts for to
// SOAK_PROBE_DIR/mem-<pid>-<threadId>.jsonl: the RSS invariant's split of a process's memory into what V8 holds and
// what the C allocator holds (docs/operations.md#the-soak). It reads nothing of the service and changes nothing in it.
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { isMainThread, threadId } from 'node:worker_threads';

const dir = process.env.SOAK_PROBE_DIR;
if (dir) {
  const memFile = join(dir, `mem-${process.pid}-${threadId}.jsonl`);
  const sampleMemory = () => {
    // heapTotal: what V8 has committed for this thread's heap; external: the buffers and other memory outside it that
    // this thread's objects hold (arrayBuffers is part of it)
    const m = process.memoryUsage();
    const line = { t: Date.now(), tid: threadId, heapTotal: m.heapTotal, heapUsed: m.heapUsed, external: m.external };
    try {
      appendFileSync(memFile, `${JSON.stringify(line)}\n`);
    } catch {
      // the soak's folder is gone (the soak ended): nothing to report to
    }
  };
  sampleMemory();
  setInterval(sampleMemory, 10_000).unref();
}
if (isMainThread && dir) {
  const file = join(dir, `${process.pid}.jsonl`);
  // 10 ms: what prom-client samples at; a delay is the time past the timer's due moment plus this resolution
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  const timer = setInterval(() => {
    if (histogram.count > 0) {
      // the distribution as (percentile, ms) steps: enough to merge seconds into one distribution exactly
      const steps = [...histogram.percentiles].map(([p, ns]) => [p, Math.round(ns / 1e4) / 100]);
      const line = { t: Date.now(), n: histogram.count, max: Math.round(histogram.max / 1e4) / 100, steps };
      try {
        appendFileSync(file, `${JSON.stringify(line)}\n`);
      } catch {
        // the soak's folder is gone (the soak ended): nothing to report to
      }
    }
    histogram.reset();
  }, 1_000);
  timer.unref();
}
