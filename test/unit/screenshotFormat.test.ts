import t from 'tap';
import { imageFormat } from '../../services/api/screenshots.js';

/** The image a screenshot route answers with (docs/screenshots.md#screenshots): `format`, else what Accept asks for. */
t.test('screenshot format', async (t) => {
  t.equal(imageFormat('webp', 'image/png'), 'webp', 'format wins over Accept');
  t.equal(imageFormat(undefined, 'text/html,image/webp,*/*;q=0.8'), 'webp', 'the first image type Accept names');
  t.equal(imageFormat(undefined, 'image/webp;q=0, image/png'), 'png', 'a type refused with q=0 is skipped');
  t.equal(imageFormat(undefined, 'IMAGE/WEBP'), 'webp', 'in any case');
  t.equal(imageFormat(undefined, 'image/avif'), 'png', 'a type not made: PNG');
  t.equal(imageFormat(undefined, undefined), 'png', 'no Accept: PNG');
});
