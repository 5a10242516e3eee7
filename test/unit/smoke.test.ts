import t from 'tap';
import { SubmitSearchBody } from '../../contracts/search.js';

t.test('SubmitSearchBody › applies defaults', async (t) => {
  const v = SubmitSearchBody.parse({ keyword: '  a   b ' });
  t.equal(v.keyword, 'a b');
  t.equal(v.device, 'desktop');
});
