// Loaded into every test file's process after tap's own hooks (package.json, tap.node-arg; docs/testing.md#how-long-it-takes).
//
// tap tracks the processes a test starts (@tapjs/processinfo) for its coverage report: it puts its module loader in
// NODE_OPTIONS and into the environment of every process spawned from here, so each service, cluster role and CLI a
// test starts loaded every module through that hook, about twice the CPU of a start (one `serve` to listening: 4.2 s
// against 2.2 s). The suite runs with coverage off (package.json, tap.disable-coverage), so nothing reads what it
// records: a test's children start as a user's would, without it. The test file's own process keeps it.
const onSpawn = globalThis[Symbol.for('process-on-spawn@*:singletonId')];
if (onSpawn) onSpawn.listeners = [];
const options = (process.env.NODE_OPTIONS ?? '')
  .split(/\s+/)
  .filter((o) => o && !o.includes('@tapjs/processinfo'))
  .join(' ');
if (options) process.env.NODE_OPTIONS = options;
else delete process.env.NODE_OPTIONS;
