import t, { type Test } from 'tap';
import { addressProblem, type Resolver } from '../../../services/webhooks/commands/webhookSafety.js';
import { buildTestApp } from '../../support/app.js';

/**
 * /v1/webhooks bad input and refusals (docs/webhooks.md): a clear 4xx that changes nothing. Host names resolve
 * through a resolver the test answers, so refusals of non-public addresses are tested without any traffic (and
 * without DNS); the app here has no delivery worker, so nothing is ever sent.
 */
const addresses: Record<string, string[]> = {
  'hooks.example.com': ['93.184.216.34'],
  'internal.example.com': ['10.1.2.3'],
  'loopback.example.com': ['127.0.0.1'],
  'metadata.example.com': ['169.254.169.254'],
  'mixed.example.com': ['93.184.216.34', '192.168.1.10'],
  'mapped.example.com': ['::ffff:127.0.0.1'],
};
const resolve: Resolver = async (host) => {
  const list = addresses[host];
  if (!list) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return list.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};

const setup = async (t: Test, env: NodeJS.ProcessEnv = {}) => {
  const { app, mintKey } = await buildTestApp(t, env, { resolve });
  const key = await mintKey('pro');
  const other = await mintKey('pro');
  const call = async (method: string, url: string, body?: unknown, as = key) => {
    const res = await app.inject({
      method: method as 'GET',
      url: `/v1${url}`,
      headers: { 'x-api-key': as, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      payload: body === undefined ? undefined : JSON.stringify(body),
    });
    return {
      status: res.statusCode,
      json: (res.body ? res.json() : {}) as {
        detail?: string;
        webhook_id?: string;
        disabled?: boolean;
        webhooks?: unknown[];
      },
    };
  };
  return { call, other };
};

t.test('webhooks › registrations refused by default: http, non-public addresses', async (t) => {
  const { call } = await setup(t);
  const cases: Array<[string, RegExp]> = [
    ['http://hooks.example.com/x', /must use https.*SERP_WEBHOOK_ALLOW_HTTP/],
    ['https://internal.example.com/x', /10\.1\.2\.3 is a private address/],
    ['https://loopback.example.com/x', /127\.0\.0\.1 is a loopback address/],
    ['https://metadata.example.com/x', /169\.254\.169\.254 is a linkLocal address/],
    ['https://mixed.example.com/x', /192\.168\.1\.10 is a private address/],
    ['https://mapped.example.com/x', /loopback/],
    ['https://127.0.0.1/x', /loopback/],
    ['https://[::1]/x', /loopback/],
    ['https://[::127.0.0.1]/x', /loopback \(127\.0\.0\.1 inside\)/],
    ['https://[64:ff9b::10.0.0.1]/x', /private \(10\.0\.0\.1 inside\)/],
    ['https://[2002:7f00:1::]/x', /loopback \(127\.0\.0\.1 inside\)/],
    ['https://user:pw@hooks.example.com/x', /user name or password/],
    ['ftp://hooks.example.com/x', /https/],
  ];
  for (const [url, detail] of cases) {
    const res = await call('POST', '/webhooks', { url, events: ['search.completed'] });
    t.equal(res.status, 422, `${url}: 422`);
    t.match(res.json.detail, detail, `${url}: ${res.json.detail}`);
  }
  const ok = await call('POST', '/webhooks', { url: 'https://hooks.example.com/x', events: ['search.completed'] });
  t.equal(ok.status, 201, 'a public https host is accepted');
  t.equal((await call('GET', '/webhooks')).json.webhooks?.length, 1, 'only it was recorded');
});

t.test('webhooks › SERP_WEBHOOK_ALLOW_PRIVATE and _HTTP accept them (tests, on-premises)', async (t) => {
  const { call } = await setup(t, { SERP_WEBHOOK_ALLOW_HTTP: '1', SERP_WEBHOOK_ALLOW_PRIVATE: '1' });
  for (const url of ['http://internal.example.com/x', 'https://loopback.example.com/x', 'http://127.0.0.1:9/x']) {
    t.equal((await call('POST', '/webhooks', { url, events: ['search.completed'] })).status, 201, url);
  }
});

t.test('webhooks › bad input is a 4xx and changes nothing; another key sees a 404', async (t) => {
  const { call, other } = await setup(t);
  const url = 'https://hooks.example.com/x';
  const bad: Array<[string, unknown, RegExp]> = [
    ['a URL that does not parse', { url: 'not a url', events: ['search.completed'] }, /does not parse|url/],
    ['a URL over 2,000 characters', { url: `${url}/${'a'.repeat(2000)}`, events: ['search.completed'] }, /2000/],
    [
      'a URL over 2,000 characters once percent-encoded (980 emoji typed, 11,783 stored)',
      { url: `${url}/${'😀'.repeat(980)}`, events: ['search.completed'] },
      /2000 characters once normalised/,
    ],
    ['an unknown event type', { url, events: ['search.done'] }, /search\.done|event/],
    ['no event type', { url, events: [] }, /event/],
    ['an unknown field', { url, events: ['search.completed'], secret: 'x' }, /secret|unrecognized/i],
    [
      'a host that does not resolve',
      { url: 'https://nowhere.example.com/x', events: ['search.completed'] },
      /resolve|ENOTFOUND/,
    ],
    [
      'a monitor of no one',
      { url, events: ['monitor.alert'], monitor_ids: ['mon_000000000000000000000000'] },
      /not found/,
    ],
  ];
  for (const [what, body, detail] of bad) {
    const res = await call('POST', '/webhooks', body);
    t.equal(res.status, 422, `${what}: 422`);
    t.match(res.json.detail, detail, `${what}: ${res.json.detail}`);
  }
  t.same((await call('GET', '/webhooks')).json.webhooks, [], 'nothing was recorded');

  const ids: string[] = [];
  for (let i = 0; i < 10; i++) {
    const res = await call('POST', '/webhooks', { url: `${url}/${i}`, events: ['search.completed'] });
    t.equal(res.status, 201);
    ids.push(res.json.webhook_id as string);
  }
  const eleventh = await call('POST', '/webhooks', { url: `${url}/10`, events: ['search.completed'] });
  t.equal(eleventh.status, 422, 'an 11th endpoint is refused');
  t.match(eleventh.json.detail, /10 webhook endpoints/);

  const id = ids[0] as string;
  for (const [method, path, body] of [
    ['GET', `/webhooks/${id}`, undefined],
    ['PATCH', `/webhooks/${id}`, { disabled: true }],
    ['POST', `/webhooks/${id}/rotate-secret`, undefined],
    ['GET', `/webhooks/${id}/deliveries`, undefined],
    ['POST', `/webhooks/${id}/replay`, { since: '2026-01-01' }],
    ['DELETE', `/webhooks/${id}`, undefined],
  ] as const) {
    t.equal((await call(method, path, body, other)).status, 404, `another key: ${method} ${path} is a 404`);
  }
  t.equal((await call('GET', `/webhooks/${id}`)).json.disabled, false, 'and changed nothing');
  t.equal((await call('PATCH', `/webhooks/${id}`, {})).status, 422, 'an empty PATCH is a 422');
  t.equal((await call('PATCH', `/webhooks/${id}`, { events: ['nope'] })).status, 422);
  t.equal(
    (await call('POST', `/webhooks/${id}/replay`, { since: 'yesterday' })).status,
    422,
    'a since that is no date',
  );
  t.equal((await call('POST', `/webhooks/${id}/replay`, { since: '2999-01-01' })).status, 422, 'a since in the future');
  t.equal((await call('GET', `/webhooks/${id}/deliveries?status=lost`)).status, 422, 'an unknown status');
  t.equal((await call('POST', `/webhooks/${id}/deliveries/dlv_nope/retry`)).status, 404, 'an unknown delivery');
  t.equal((await call('DELETE', `/webhooks/${id}`)).status, 204, 'its own key deletes it');
  t.equal((await call('GET', `/webhooks/${id}`)).status, 404, 'then it is gone');
});

t.test('webhooks › addresses: only public unicast passes', async (t) => {
  for (const a of ['10.0.0.1', '172.16.5.4', '192.168.0.1', '127.0.0.1', '0.0.0.0', '169.254.1.1', '100.64.0.1']) {
    t.ok(addressProblem(a, false), `${a} is refused`);
  }
  for (const a of ['::1', 'fe80::1', 'fc00::1', 'ff02::1', '::ffff:10.0.0.1', '224.0.0.1', '255.255.255.255']) {
    t.ok(addressProblem(a, false), `${a} is refused`);
  }
  for (const a of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111']) {
    t.equal(addressProblem(a, false), undefined, `${a} is public`);
  }
  // every IPv6 form that carries an IPv4 address is judged by it (docs/webhooks.md#delivery)
  const embedded: Array<[string, string]> = [
    ['::127.0.0.1', '127.0.0.1'], // IPv4-compatible
    ['::10.0.0.1', '10.0.0.1'],
    ['::ffff:0:192.168.0.1', '192.168.0.1'], // SIIT
    ['64:ff9b::127.0.0.1', '127.0.0.1'], // NAT64, well-known prefix
    ['64:ff9b:1:a9fe:a9:fe00::', '169.254.169.254'], // NAT64, local-use /48 (RFC 6052's layout)
    ['2002:a00:1::1', '10.0.0.1'], // 6to4
    ['2001:0:7f00:1::ffff:ffff', '127.0.0.1'], // Teredo: its server
    ['2001:0:808:808:0:0:f5ff:fffe', '10.0.0.1'], // Teredo: its client, stored inverted
    ['2606:4700::5efe:7f00:1', '127.0.0.1'], // ISATAP
  ];
  for (const [a, inner] of embedded) {
    t.match(addressProblem(a, false), new RegExp(`\\(${inner.replace(/\./g, '\\.')} inside\\)`), `${a} is ${inner}`);
  }
  for (const a of ['::8.8.8.8', '64:ff9b::8.8.8.8', '2002:808:808::1', '2001:0:808:808:0:0:f7f7:f7f7']) {
    t.equal(addressProblem(a, false), undefined, `${a} carries a public address`);
  }
  t.equal(addressProblem('127.0.0.1', true), undefined, 'SERP_WEBHOOK_ALLOW_PRIVATE accepts anything');
});
