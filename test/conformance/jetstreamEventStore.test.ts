import { randomBytes } from 'node:crypto';
import { jetstream, jetstreamManager, type MsgRequest, type NextMsgRequest } from '@nats-io/jetstream';
import { headers } from '@nats-io/transport-node';
import t from 'tap';
import { createJetStreamEventStore, subjectToken } from '../../services/adapters/eventStore/jetstream.js';
import { WrongExpectedVersionError } from '../../services/ports/eventStore.js';
import { natsConnect, natsServerOrSkip } from '../support/nats.js';
import { eventStoreConformance } from './eventStoreSuite.js';

const servers = await natsServerOrSkip(t);
if (servers) {
  const fixture = () => {
    const name = `EV_${randomBytes(4).toString('hex')}`;
    return Promise.resolve({
      connect: async () =>
        createJetStreamEventStore({
          nc: await natsConnect(servers),
          ownsConnection: true,
          stream: name,
          subjectPrefix: `ev.${name}`,
          pollIntervalMs: 100,
        }),
      cleanup: async () => undefined,
    });
  };

  t.test('JetStreamEventStore › conformance', async (t) => eventStoreConformance(t, fixture));

  t.test('JetStreamEventStore › any stream name maps to one subject token, one to one', async (t) => {
    t.equal(subjectToken('searchJob-abc_1'), 'searchJob-abc_1', 'the names the service uses stay readable');
    t.equal(subjectToken('a.b*c>d e~'), 'a~2eb~2ac~3ed~20e~7e');
    t.not(subjectToken('a.b'), subjectToken('a~2eb'), 'escaping cannot collide');
    t.equal(subjectToken('ü'), '~c3~bc');
    t.throws(() => subjectToken(''));
  });

  t.test('JetStreamEventStore › odd stream names, the append limit, positions', async (t) => {
    const { connect } = await fixture();
    const store = await connect();
    t.teardown(() => store.close());
    const odd = `odd.name with spaces*>~${randomBytes(3).toString('hex')}`;
    await store.appendToStream(odd, [{ type: 'A', data: 1 }], { expectedVersion: 'no_stream' });
    t.same(
      (await store.readStream(odd)).events.map((e) => [e.streamName, e.data]),
      [[odd, 1]],
    );
    await t.rejects(
      store.appendToStream(
        'big',
        Array.from({ length: 1025 }, () => ({ type: 'A', data: 0 })),
      ),
      TypeError,
      'more than 1,024 events in one append are refused',
    );
    await t.rejects(store.appendToStream('empty', []), TypeError, 'an empty append is refused');
    const r = await store.appendToStream(
      'three',
      [1, 2, 3].map((i) => ({ type: 'A', data: i })),
    );
    const all = await store.readAll({ fromPosition: r.lastGlobalPosition - 3 });
    t.same(
      all.map((e) => e.globalPosition),
      [r.lastGlobalPosition - 2, r.lastGlobalPosition - 1, r.lastGlobalPosition],
      'the events of one append have consecutive positions',
    );
    const mid = await store.readAll({ fromPosition: r.lastGlobalPosition - 2 });
    t.equal(mid.length, 2, 'a checkpoint inside an append resumes inside it');
  });

  t.test('JetStreamEventStore › a stale cached tail never lets a conflicting append through', async (t) => {
    const { connect } = await fixture();
    const a = await connect();
    const b = await connect();
    t.teardown(async () => {
      await a.close();
      await b.close();
    });
    await a.appendToStream('s', [{ type: 'A', data: 0 }], { expectedVersion: 'no_stream' });
    await b.appendToStream('s', [{ type: 'B', data: 1 }], { expectedVersion: 0 });
    // a still believes the stream is at version 0
    await t.rejects(a.appendToStream('s', [{ type: 'C', data: 2 }], { expectedVersion: 0 }), WrongExpectedVersionError);
    const next = await a.appendToStream('s', [{ type: 'C', data: 2 }], { expectedVersion: 'any' });
    t.equal(next.nextExpectedVersion, 2, "'any' goes on top of the other writer's event");
    t.same(
      (await b.readStream('s')).events.map((e) => e.type),
      ['A', 'B', 'C'],
    );
  });

  t.test('JetStreamEventStore › a message sent twice with one expected sequence is written once', async (t) => {
    // the store sends an append again, with the same expected sequence, when a send gets no answer (a stream leader
    // lost mid-request); what makes that safe is the server's: the second send is refused, whatever its dedupe
    // says, and the subject's first message after the expected sequence is the first send's, found by its id
    const { connect } = await fixture();
    const store = await connect();
    t.teardown(() => store.close());
    await store.appendToStream('probe', [{ type: 'A', data: 0 }]);
    const nc = await natsConnect(servers);
    t.teardown(() => nc.close());
    const js = jetstream(nc);
    const jsm = await jetstreamManager(nc);
    const subject = `ev.${store.streamName}.${subjectToken('twice')}`;
    const h = () => {
      const m = headers();
      m.set('Serp-Stream', 'twice');
      m.set('Serp-Version', '0');
      m.set('Serp-Count', '1');
      return m;
    };
    const body = JSON.stringify([
      { type: 'A', data: 1, metadata: { eventId: 'e1', recordedAt: new Date().toISOString() } },
    ]);
    const first = await js.publish(subject, body, { headers: h(), msgID: 'm-1', expect: { lastSubjectSequence: 0 } });
    await t.rejects(
      js.publish(subject, body, { headers: h(), msgID: 'm-1', expect: { lastSubjectSequence: 0 } }),
      /wrong last sequence/i,
      'the second send is refused as a conflict',
    );
    const query: NextMsgRequest = { seq: 1, next_by_subj: subject };
    const found = await jsm.streams.getMessage(store.streamName, query as unknown as MsgRequest);
    t.equal(
      found?.header?.get('Nats-Msg-Id'),
      'm-1',
      "the subject's first message after the expectation is the first send",
    );
    t.equal(found?.seq, first.seq, 'at the sequence it was acknowledged at');
    t.same(
      (await store.readStream('twice')).events.map((e) => e.data),
      [1],
      'the event stream holds the event once',
    );
  });
}
