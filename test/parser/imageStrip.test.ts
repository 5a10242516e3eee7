import t from 'tap';
import { fixturesMissing } from '../support/fixtures.js';
import { serpOfFixture } from './compare.js';

/**
 * The image strip above the results of 2023–24 entity pages ("visual digest"), reported as SerpApi's
 * `inline_images`, first and in page order: title (the picture's alt text), source (the page the image is from),
 * thumbnail. Values read by hand in the pages.
 */
type Image = { title?: string; source?: string; link?: string; thumbnail?: string };

const imagesOf = (page: string): Image[] =>
  (serpOfFixture(`serp/${page}`).serp_features.inline_images ?? []) as Image[];

t.test('inline_images › the image strip above the results', { skip: fixturesMissing() }, async (t) => {
  const mater = imagesOf('websearcher/2024-03-13_mater-cars_054791556a3a.html.gz');
  t.same(
    mater.map((i) => i.source),
    [
      'https://en.wikipedia.org/wiki/Tow_Mater',
      'https://ew.com/article/2006/06/19/cars-man-who-inspired-mater/',
      'https://pixarcars.fandom.com/wiki/Mater',
      'https://www.amazon.com/Disney-Cars-Moments-Character-Exclusive/dp/B0BN16NY22',
      'https://www.youtube.com/watch?v=4VxEPhl03ww',
    ],
    'five images, in page order; the strip has no other image on this page',
  );
  t.same(Object.keys(mater[0] ?? {}), ['title', 'source', 'thumbnail'], 'an image links nowhere: no link');
  t.equal(mater[0]?.title, 'Tow Mater - Wikipedia');
  t.equal(mater[3]?.title, 'Amazon.com: Mattel Disney and Pixar Cars Moving Moments Toy ...');
  t.match(mater[0]?.thumbnail, /^data:image\/jpeg;base64,\/9j\//, 'the picture the page sets into the placeholder');

  const oscar = imagesOf('websearcher/2024-03-13_oscar-the-grouch_7d621e868493.html.gz');
  t.equal(oscar.length, 5);
  t.same(
    oscar.map((i) => i.title),
    [
      'Oscar the Grouch - Sesame Workshop',
      'Oscar the Grouch | Muppet Wiki | Fandom',
      'Oscar the Grouch - Wikipedia',
      'Oscar the Grouch puppet | Smithsonian Institution',
      'Oscar the Grouch',
    ],
  );
  t.equal(oscar[3]?.source, 'https://www.si.edu/object/oscar-grouch-puppet%3Anmah_1182904');
  t.match(oscar[0]?.thumbnail, /^data:image\/webp;base64,/);

  // 2023 mobile: the strip heads the knowledge panel; every picture's alt text is "Image Result", a label, and the
  // first picture is a licensed one on gstatic (no page it is from): 14 images with their pages, no titles.
  const coffee = imagesOf('serp-parser-zlurad/mobile/coffee.html.gz');
  t.equal(coffee.length, 14);
  t.equal(coffee[0]?.source, 'https://en.wikipedia.org/wiki/Coffee');
  t.notOk(
    coffee.some((i) => 'title' in i),
    'no title where the page shows none',
  );
  t.match(coffee[2]?.thumbnail, /^https:\/\/encrypted-tbn0\.gstatic\.com\/images\?q=tbn:/);
});

t.test('inline_images › no strip on a page without one', { skip: fixturesMissing() }, async (t) => {
  // An entity page of the same crawl whose strip holds only video and web cards (no image attrids).
  t.notOk(
    serpOfFixture('serp/websearcher/2024-03-13_pitbull-i-believe-that-we-will-win-world_eef22ed8a7ee.html.gz')
      .serp_features.inline_images,
  );
  // A page whose only images are the pack inside the results: exactly that pack, nothing added before it.
  const folders = imagesOf('websearcher/2024-03-13_file-folder_f10d116b26c6.html.gz');
  t.equal(folders.length, 3);
  t.equal(folders[1]?.title, 'Smead Reversible Tab File Folders, 1/2-Cut Tab (15394)');
});
