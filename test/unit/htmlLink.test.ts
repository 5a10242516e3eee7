import t from 'tap';
import type { JobStatusDoc } from '../../projections/jobStatus/jobStatus.js';
import { htmlLink } from '../../services/answers/html.js';
import { verifyRawLink } from '../../services/answers/signing.js';

/**
 * `output=html` (docs/api.md#outputs): the answer is a signed link to the job's raw pages, valid for
 * SERP_PRESIGN_TTL_S, that works without the key.
 */
t.test('output=html › a signed link to the raw pages', async (t) => {
  const job = { jobId: 'j1', status: 'done' } as JobStatusDoc;
  const before = Date.now();
  const answer = htmlLink({ linkSecret: 'a link secret of the server', presignTtlS: 900 }, job, 'https://serp.example');
  t.match(answer, {
    job_id: 'j1',
    status: 'done',
    html_url: /^https:\/\/serp\.example\/raw\/j1\?expires=\d+&signature=/,
  });
  const expiresIn = Date.parse(answer.expires_at) - before;
  t.ok(expiresIn > 898_000 && expiresIn <= 900_000, `valid for the TTL (${expiresIn} ms)`);
  const url = new URL(answer.html_url);
  t.equal(
    verifyRawLink(
      'a link secret of the server',
      'j1',
      Number(url.searchParams.get('expires')),
      url.searchParams.get('signature') ?? '',
    ),
    'ok',
    'and the raw route accepts it',
  );
});
