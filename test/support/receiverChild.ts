// A webhook receiver (webhookReceiver.ts) in a process of its own, driven over IPC by receiverProcess.ts: for
// benchmarks whose own event loop must not spend itself verifying thousands of deliveries while it times the service.
import { startReceiver } from './webhookReceiver.js';

type Command =
  | { id: number; cmd: 'setSecrets'; path: string; list: string[] }
  | { id: number; cmd: 'down' | 'up' | 'close' }
  | { id: number; cmd: 'count' | 'distinct'; prefix: string };

const receiver = await startReceiver();
const send = (m: unknown) => process.send!(m);
process.on('message', async (m: Command) => {
  try {
    let value: unknown;
    if (m.cmd === 'setSecrets') receiver.setSecrets(m.path, m.list);
    else if (m.cmd === 'down') await receiver.down();
    else if (m.cmd === 'up') await receiver.up();
    else if (m.cmd === 'count') value = receiver.received.filter((x) => x.path.startsWith(m.prefix)).length;
    else if (m.cmd === 'distinct')
      value = new Set(
        receiver.received.filter((x) => x.path.startsWith(m.prefix)).map((x) => `${x.path} ${x.headers['webhook-id']}`),
      ).size;
    else if (m.cmd === 'close') {
      await receiver.close();
      send({ id: m.id });
      process.disconnect();
      return;
    }
    send({ id: m.id, value });
  } catch (err) {
    send({ id: m.id, error: String(err) });
  }
});
process.on('disconnect', () => process.exit(0));
send({ ready: receiver.origin });
