import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { serviceUrl } from '../../services/cli/serviceClient.js';
import { DEFAULT_SERVICE_URL } from '../../services/config/schema.js';
import { removeDir, tempDataDir } from '../support/service.js';

t.test('serviceUrl: where the CLI’s HTTP commands find the service', async (t) => {
  const data = tempDataDir('service-url');
  // a live process standing in for the service that server.json names (the CLI checks its pid, not its port)
  const holder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' });
  t.teardown(() => {
    holder.kill();
    removeDir(data);
  });
  const saved = process.env.SERP_API_BASE_URL;
  t.teardown(() => {
    if (saved === undefined) delete process.env.SERP_API_BASE_URL;
    else process.env.SERP_API_BASE_URL = saved;
  });
  delete process.env.SERP_API_BASE_URL;

  t.equal(await serviceUrl({ data }), DEFAULT_SERVICE_URL, 'no service on the directory: the schema’s default');
  writeFileSync(join(data, 'server.json'), JSON.stringify({ url: 'http://127.0.0.1:41234', pid: holder.pid }));
  t.equal(await serviceUrl({ data }), 'http://127.0.0.1:41234', 'the url server.json names, its process alive');
  process.env.SERP_API_BASE_URL = 'http://127.0.0.1:5000/';
  t.equal(await serviceUrl({ data }), 'http://127.0.0.1:5000', 'SERP_API_BASE_URL wins over the directory');
  t.equal(
    await serviceUrl({ data, baseUrl: 'http://127.0.0.1:6000' }),
    'http://127.0.0.1:6000',
    '--base-url wins over both',
  );
  await t.rejects(serviceUrl({ baseUrl: 'ftp://x' }), /--base-url must be an http\(s\) URL, got "ftp:\/\/x"/);
  holder.kill();
  await new Promise((r) => holder.once('exit', r));
  delete process.env.SERP_API_BASE_URL;
  t.equal(await serviceUrl({ data }), DEFAULT_SERVICE_URL, 'a server.json left by a process that is gone is ignored');
});
