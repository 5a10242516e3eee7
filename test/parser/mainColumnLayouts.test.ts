import t from 'tap';
import { loadDom } from '../../parser/dom/index.js';
import { parseFeatures } from '../../parser/features/index.js';

/**
 * Two 2024–25 desktop layouts that no fixture page has (docs/parser.md, "Built" and "Not built"): the "multimedia"
 * image row and the "About …" knowledge panel in the results column. The markup below is written by hand after the
 * structure of real pages read in a public repository (named in docs/parser.md), cut down to what the readers use
 * and to neutral values; it is not a copy of those pages.
 */
type Image = { title?: string; source?: string; link?: string; thumbnail?: string };

const featuresOf = (body: string): Record<string, unknown> =>
  parseFeatures(loadDom(`<html><body><div id="rso">${body}</div></body></html>`));

const card = (doc: string, page: string, alt: string, thumb: string): string =>
  `<div class="eA0Zlc" data-attrid="secondary image" data-docid="${doc}" data-lpage="${page}"><div role="button">` +
  `<g-inner-card><div><img alt="${alt}" data-src="${thumb}" src="data:image/gif;base64,R0lGODlhAQABAAAAACw="></div>` +
  '</g-inner-card></div></div>';

const imagesHeading = (text: string) => `<div class="HnYYW"><div aria-level="2" role="heading">${text}</div></div>`;

const viewAll =
  '<a class="ZZGZKb" href="/search?q=lake+park&amp;tbm=isch&amp;source=univ"><g-more-button>View all</g-more-button></a>';

const row = (cards: string, heading = imagesHeading('Images')): string =>
  `<div class="TzHB6b">${heading}<div data-count="4"><g-scrolling-carousel><div class="EDblX">${cards}${viewAll}` +
  '</div></g-scrolling-carousel></div></div>';

const thumb = (n: number) => `https://encrypted-tbn0.gstatic.com/images?q=tbn:example${n}&s`;

const CARDS = [
  card('d1', 'https://parks.example.org/lake-park', 'Lake Park - Parks of Example', thumb(1)),
  card('d2', 'https://travel.example.com/lake-park-guide', 'A guide to Lake Park', thumb(2)),
  // The same picture again (same docid): one item.
  card('d2', 'https://travel.example.com/lake-park-guide', 'A guide to Lake Park', thumb(2)),
  // A licensed picture Google hosts itself has no page it is from: left out.
  card('d3', 'https://encrypted-tbn0.gstatic.com/licensed-photo?id=3', 'Lake Park at dawn', thumb(3)),
  // Two pictures from one page are two items.
  card('d4', 'https://parks.example.org/lake-park', 'Lake Park in winter', thumb(4)),
].join('');

/** An organic result, as the blocks around the row hold them. */
const organic = (link: string, title: string) =>
  `<div class="TzHB6b"><div class="g"><a href="${link}"><h3>${title}</h3></a><div class="VwiC3b">About ${title}.</div></div></div>`;

t.test('inline_images › the 2024 multimedia row: alt text, source page, thumbnail', async (t) => {
  // As on an entity page of 2024: one `.MjjYud` holds the column; its blocks are `.TzHB6b`, the row among them.
  const images = featuresOf(
    `<div class="MjjYud"><div class="kp-wholepage kp-wholepage-osrp">${organic('https://a.example.org/', 'Lake Park')}` +
      `${row(CARDS)}${organic('https://b.example.org/', 'Lake Park trails')}</div></div>`,
  ).inline_images as Image[];
  t.same(images, [
    { title: 'Lake Park - Parks of Example', source: 'https://parks.example.org/lake-park', thumbnail: thumb(1) },
    { title: 'A guide to Lake Park', source: 'https://travel.example.com/lake-park-guide', thumbnail: thumb(2) },
    { title: 'Lake Park in winter', source: 'https://parks.example.org/lake-park', thumbnail: thumb(4) },
  ]);
  t.notOk(
    images.some((i) => 'link' in i),
    'a picture links nowhere (it opens the viewer); "View all" is not an image',
  );
});

t.test('inline_images › the row as a block of its own, headed in another language', async (t) => {
  const images = featuresOf(
    `<div class="MjjYud">${organic('https://a.example.org/', 'Lake Park')}</div>` +
      `<div class="MjjYud">${row(CARDS, imagesHeading('Bilder'))}</div>`,
  ).inline_images as Image[];
  t.equal(images.length, 3);
  t.equal(images[0]?.title, 'Lake Park - Parks of Example');
});

t.test('inline_images › the same cards elsewhere are no image pack', async (t) => {
  // A knowledge panel's own picture row carries the same marker inside `#media_result_group`: header images.
  const panelRow =
    `<div class="MjjYud"><div class="kp-wholepage">${imagesHeading('Images')}<div id="media_result_group">` +
    `<g-scrolling-carousel>${CARDS}</g-scrolling-carousel></div></div></div>`;
  t.notOk(featuresOf(panelRow).inline_images, 'a panel picture group is not read as inline images');
  // A carousel of these cards under another heading (a film's "Cast" row, say) is not an image pack either.
  const other = `<div class="MjjYud">${row(CARDS, imagesHeading('Cast'))}</div>`;
  t.notOk(featuresOf(other).inline_images, 'only a block headed as images is read');
});

const aboutCard = (link: string, label: string, text: string, site: string, labelFirst = false): string => {
  const labelEl = `<div aria-level="3" role="heading"><span>${label}</span></div>`;
  const textEl = `<div><span class="RuDat">${text}</span></div>`;
  return (
    `<div role="listitem"><div><a class="ddkIM" aria-hidden="false" href="${link}"></a>` +
    `${labelFirst ? labelEl + textEl : textEl + labelEl}<div><img alt="" src="data:image/png;base64,iVBOR">` +
    `<div>${site}</div></div></div></div>`
  );
};

const aboutBlock = (name: string, more = `More about ${name}`): string =>
  `<div class="MjjYud"><div><div><div aria-level="2" role="heading"><span class="mgAbYb"><div>About ${name}</div>` +
  '</span></div></div><div role="list">' +
  aboutCard(
    'https://en.wikipedia.org/wiki/Example_Motors',
    'From Wikipedia',
    `${name} is an <em>example</em> maker of electric cars, headquartered in Example City.`,
    'Wikipedia',
  ) +
  aboutCard(
    'https://www.example-motors.com/about',
    'In their own words',
    'We build cars that run on sunshine.',
    'www.example-motors.com',
  ) +
  aboutCard(
    'https://news.example.net/companies/example-motors',
    'Example Motors | Company profile',
    'A company profile.',
    'Example News',
    true,
  ) +
  `</div><div><a class="jRKCUd" href="/search?q=About+example-motors.com&amp;tbm=ilp&amp;ctx=ob"><hr><div><span>${more}</span>` +
  '</div></a></div></div></div>';

t.test('knowledge_graph › the 2025 "About …" panel in the results column', async (t) => {
  const kg = featuresOf(`${aboutBlock('Example Motors')}${organic('https://a.example.org/', 'Example Motors news')}`)
    .knowledge_graph as Record<string, unknown>;
  t.same(kg, {
    title: 'Example Motors',
    description: 'Example Motors is an example maker of electric cars, headquartered in Example City.',
    source: { name: 'Wikipedia', link: 'https://en.wikipedia.org/wiki/Example_Motors' },
  });
  t.notOk('type' in kg, 'the block shows no type, so none is reported');
});

t.test("knowledge_graph › the entity's name whatever words the interface puts around it", async (t) => {
  const titleOf = (html: string) => (featuresOf(html).knowledge_graph as { title?: string } | undefined)?.title;
  t.equal(titleOf(aboutBlock('The Example Times')), 'The Example Times', 'a name of several words');
  // Other words around the name ("Über …" / "Mehr über …", the case of the shared word differing): the name.
  t.equal(
    titleOf(aboutBlock('Example Motors', 'Mehr über Example Motors').replace('About Example', 'Über Example')),
    'Example Motors',
  );
  // Heading and link share no whole word (the name first, then different words): the heading as it is.
  t.equal(
    titleOf(aboutBlock('Example Motors', 'Alles zu Example').replace('About Example Motors', 'Example Motors info')),
    'Example Motors info',
  );
});

t.test('knowledge_graph › the "About …" block only where it is one, and never over a real panel', async (t) => {
  // A right-hand entity panel on the same page is the knowledge graph; the "About" block adds nothing to it.
  const rhs =
    '<div id="rhs"><div class="kp-wholepage"><h2 data-attrid="title">Example Motors</h2>' +
    '<div data-attrid="subtitle"><span>Car maker</span></div></div></div>';
  const kg = featuresOf(`${aboutBlock('Example Motors')}${rhs}`).knowledge_graph as Record<string, unknown>;
  t.same(kg, { title: 'Example Motors', type: 'Car maker' });
  // Without its link into the about-this-source search, a block headed "About …" is not a panel.
  const noMore = aboutBlock('Example Motors').replace('tbm=ilp', 'tbm=nws');
  t.notOk(featuresOf(noMore).knowledge_graph);
  t.notOk(featuresOf(organic('https://a.example.org/', 'About Example Motors')).knowledge_graph);
});
