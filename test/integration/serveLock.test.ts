import t from 'tap';
import { removeDir, startService, tempDataDir } from '../support/service.js';

/** Two `serve` on one data directory would run two dispatchers, queues and projectors over the same files. */
t.test('a second serve on the same data directory refuses to start and names the first', async (t) => {
  const data = tempDataDir('lock');
  const env = { SERP_GOOGLE_ORIGIN: 'http://127.0.0.1:9' };
  const first = await startService(data, env);
  t.teardown(async () => {
    await first.stop();
    removeDir(data);
  });
  await t.rejects(
    startService(data, env),
    new RegExp(`another serp-api serve \\(pid ${first.child.pid}\\) is using`),
    'the second exits with a message naming the first one’s pid',
  );
  t.equal((await fetch(`${first.url}/health`)).status, 200, 'the first is unharmed');

  await first.kill();
  const again = await startService(data, env);
  t.equal((await fetch(`${again.url}/health`)).status, 200, 'a lock left by a killed process does not block a restart');
  await again.stop();
});
