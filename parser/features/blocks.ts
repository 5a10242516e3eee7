import { closest, type HTMLElement, qs, qsa, textOf } from '../dom/index.js';
import { keyMomentsOf } from '../organicExtras.js';
import { recordBlock } from '../sources.js';
import { attr, type Item, type LinkCard, linkCards, pageImages, thumbnailOf } from './blockCards.js';
import {
  forumItem,
  imageItem,
  jobItems,
  perspectiveItem,
  recipeItem,
  topStoryItem,
  twitterResults,
  universalImageItem,
  videoItem,
} from './blockItems.js';

export { shoppingResults } from './shopping.js';

/**
 * Carousel-like blocks (top stories, videos, perspectives, forums, jobs, recipes, images, X/Twitter) have no class
 * that lasted, so they are told apart as WebSearcher does: by the block's heading. The headings are localized;
 * these cover the interface languages of the fixture pages. Where a stable marker exists it is used as well.
 */
const HEADINGS: Array<[string, RegExp]> = [
  [
    'top_stories',
    /^(Top stories|Noticias destacadas|Principales noticias|Schlagzeilen|Top-Meldungen|À la une|Principais notícias|Главные новости|Tin bài hàng đầu|ข่าวเด่น|トップニュース|주요 뉴스|Najważniejsze wiadomości|Notizie principali|Huvudnyheter|News)$/i,
  ],
  ['inline_videos', /^(Videos|Short videos|Vídeos|Vidéos|Видео|Video|動画|동영상|Filmy|Videoklipp|วิดีโอ)$/i],
  ['perspectives', /^(Perspectives|What people are saying|Perspectivas|Perspektiven|Points de vue)$/i],
  [
    'discussions_and_forums',
    /^(Discussions and forums|Foros de debate|Diskussionen und Foren|Discussions et forums|Fóruns e discussões|Обсуждения и форумы)$/i,
  ],
  ['jobs_results', /^(Jobs|Empleos|Jobs in der Nähe|Emplois|Vagas|Вакансии)$/i],
  ['recipes_results', /^(Recipes|Recetas|Rezepte|Recettes|Receitas|Рецепты)$/i],
  [
    'inline_images',
    /^(Images|Images for .*|Imágenes|Imágenes de .*|Bilder|Bilder zu .*|Imagens|Картинки|Hình ảnh|รูปภาพ|画像|이미지)$/i,
  ],
];

const isWithin = (inner: HTMLElement, outer: HTMLElement): boolean => {
  for (let p = inner.parentNode; p; p = p.parentNode) if (p === outer) return true;
  return false;
};

const headingOf = (block: HTMLElement): string => {
  const h =
    qs(block, '[role="heading"][aria-level="2"]') ??
    qs(block, 'h2') ??
    qs(block, 'g-section-with-header [role="heading"]') ??
    qs(block, '.mgAbYb');
  return textOf(h);
};

/**
 * The top-level blocks of the results column: `div.MjjYud` (2022–26) or the children of `#rso`. On knowledge-panel
 * layouts (2023–24) one `MjjYud` holds the whole column and its blocks are the outermost `div.TzHB6b` inside it;
 * reading that shell as one block would file every link of the page under whichever heading comes first.
 */
const topBlocks = (root: HTMLElement): HTMLElement[] => {
  const mj = qsa(root, '.MjjYud').flatMap((block) => {
    const inner: HTMLElement[] = [];
    for (const sub of qsa(block, '.TzHB6b')) {
      const last = inner.at(-1);
      if (!last || !isWithin(sub, last)) inner.push(sub);
    }
    return inner.length > 1 ? inner : [block];
  });
  if (mj.length) return [...mj, ...qsa(root, '#botstuff g-section-with-header')];
  const rso = qs(root, '#rso');
  return rso ? (rso.childNodes.filter((c) => c.nodeType === 1) as HTMLElement[]) : [];
};

type Reader = (card: LinkCard, images: (id: string) => string | undefined) => Item | undefined;

/** How the cards of each headed block are read (blockItems.ts); a jobs box without its plugin markup is read as news. */
const READERS: Record<string, Reader> = {
  top_stories: topStoryItem,
  inline_videos: videoItem,
  perspectives: perspectiveItem,
  discussions_and_forums: forumItem,
  recipes_results: recipeItem,
  inline_images: imageItem,
  jobs_results: topStoryItem,
};

const itemsOf = (name: string, block: HTMLElement, images: (id: string) => string | undefined): Item[] => {
  const read = READERS[name] ?? topStoryItem;
  return linkCards(block).flatMap((card) => {
    const item = read(card, images);
    return item ? [item] : [];
  });
};

export const headedBlocks = (root: HTMLElement): Record<string, unknown> => {
  const found: Record<string, Item[]> = {};
  const images = pageImages(root);
  const add = (name: string, items: Item[]) => {
    if (items.length) found[name] = [...(found[name] ?? []), ...items];
  };
  // The X/Twitter carousel is a `g-section-with-header` whose header links to the account; it can sit inside the
  // one block of a knowledge-panel layout, so it is looked for on its own.
  const twitter = qsa(root, 'g-section-with-header').filter((section) => {
    const header = qs(section, 'h3');
    const href = header ? (closest(header, 'a')?.getAttribute('href') ?? '') : '';
    return /\/\/(?:[\w-]+\.)?(?:twitter|x)\.com\//.test(href);
  });
  const out: Record<string, unknown> = {};
  const imageBlocks: HTMLElement[] = [];
  // SerpApi reports one account box (an object, not a list); a second box on a page is left out.
  const account = twitter.map((section) => twitterResults(section, images)).find(Boolean);
  if (account) out.twitter_results = account;
  // The strip above the results comes first on the page.
  add('inline_images', digestImages(root, images));
  for (const block of topBlocks(root)) {
    if (twitter.some((s) => s === block || isWithin(s, block))) continue;
    const heading = headingOf(block);
    if (qs(block, '.gws-plugins-horizon-jobs__li-ed')) {
      add('jobs_results', jobItems(block));
      continue;
    }
    const match = HEADINGS.find(([, re]) => re.test(heading));
    if (match) {
      let items = itemsOf(match[0], block, images);
      if (match[0] === 'inline_images' && !items.length) items = multimediaImages(block, images);
      if (match[0] === 'inline_videos') withKeyMoments(block, items);
      add(match[0], items);
      if (items.length) recordBlock(match[0], block);
      // A pack whose items carry no outside link (2021–22) yields nothing here; its marked items are read below.
      if (match[0] === 'inline_images' && items.length) imageBlocks.push(block);
      continue;
    }
    const named =
      qs(block, 'a.WlydOe') && qs(block, 'g-section-with-header')
        ? 'top_stories'
        : qs(block, '.RzdJxc') || qs(block, 'video-voyager')
          ? 'inline_videos'
          : undefined;
    if (!named) continue;
    const items =
      named === 'top_stories' ? itemsOf('top_stories', block, images) : withKeyMoments(block, videosOf(block, images));
    add(named, items);
    if (items.length) recordBlock(named, block);
  }
  add('inline_images', markedImages(root, images, imageBlocks));
  // SerpApi numbers inline videos 1..N on the page.
  if (found.inline_videos) found.inline_videos = found.inline_videos.map((v, i) => ({ position: i + 1, ...v }));
  return { ...out, ...found };
};

/** A video's key moments sit in its block beside its card, as links into the same video (organicExtras.ts). */
const withKeyMoments = (block: HTMLElement, items: Item[]): Item[] => {
  for (const item of items) {
    const moments = typeof item.link === 'string' ? keyMomentsOf(block, item.link) : undefined;
    if (moments) item.key_moments = moments;
  }
  return items;
};

/**
 * A block recognised only by its video items (`.RzdJxc`, `video-voyager`). When the block also holds organic
 * results (the one shell of a 2021 mobile page), only the items are read, one card each.
 */
const videosOf = (block: HTMLElement, images: (id: string) => string | undefined): Item[] => {
  if (!qs(block, 'a h3')) return itemsOf('inline_videos', block, images);
  const seen = new Set<unknown>();
  return qsa(block, '.RzdJxc, video-voyager').flatMap((el) => {
    const card = linkCards(el)[0];
    const item = card ? videoItem(card, images) : undefined;
    if (!item || seen.has(item.link)) return [];
    seen.add(item.link);
    return [item];
  });
};

/**
 * The image strip above the results of 2023–24 entity pages ("visual digest": `data-attrid` VisualDigestFirstImageResult,
 * then VisualDigestImageResult per image; its video and web cards are other attrids). An image links nowhere (it
 * opens Google's viewer), so each is SerpApi's inline image without `link`: the page it is from (`data-lpage`), its
 * title (the picture's alt text) and the picture (`pictureItems`).
 */
const digestImages = (root: HTMLElement, images: (id: string) => string | undefined): Item[] =>
  pictureItems(
    qsa(root, '[data-attrid="VisualDigestFirstImageResult"], [data-attrid="VisualDigestImageResult"]'),
    images,
  );

/**
 * The "multimedia" row of 2024 pages (WebSearcher's `images` of sub-type `multimedia`): a block headed "Images"
 * whose pictures sit in a `g-scrolling-carousel` as cards marked `data-attrid="secondary image"` with the page each
 * is from (`data-lpage`), and link nowhere (they open Google's viewer; the row's one link is "View all" into Google
 * Images). Read like the visual digest: title (alt text), source, thumbnail. The same marker inside a knowledge
 * panel's picture group (`#media_result_group`) is the panel's `header_images`, never an image pack; a picture the
 * page holds twice (the same `data-docid`) is one item.
 */
const multimediaImages = (block: HTMLElement, images: (id: string) => string | undefined): Item[] => {
  const seen = new Set<string>();
  const cards = qsa(block, 'g-scrolling-carousel [data-attrid="secondary image"]').filter((el) => {
    if (closest(el, '#media_result_group')) return false;
    const doc = el.getAttribute('data-docid');
    if (!doc) return true;
    if (seen.has(doc)) return false;
    seen.add(doc);
    return true;
  });
  return pictureItems(cards, images);
};

/**
 * Pictures that link nowhere, each marked with the page it is from (`data-lpage`): title (the alt text), source,
 * thumbnail. A page Google hosts itself (a licensed picture on gstatic) is the picture, not the page it is from,
 * and is left out.
 */
const pictureItems = (marked: HTMLElement[], images: (id: string) => string | undefined): Item[] => {
  const alts = marked.map((el) => qs(el, 'img')?.getAttribute('alt')?.trim() ?? '');
  // One alt text on every image ("Image Result" on the 2023 mobile strip) is a label, not a title.
  const label = alts.length > 1 && alts.every((a) => a === alts[0]);
  return marked.flatMap((el, i) => {
    const source = attr(el, 'data-lpage');
    if (!source || !/^https?:\/\//.test(source) || /^https?:\/\/[^/]*\.gstatic\.com\//.test(source)) return [];
    const item: Item = {};
    if (alts[i] && !label) item.title = alts[i];
    item.source = source;
    const thumbnail = thumbnailOf(el, images);
    if (thumbnail) item.thumbnail = thumbnail;
    return [item];
  });
};

/**
 * Image packs found by their items' marker (`data-attrid="images universal"`) rather than by a heading: many
 * 2021–24 packs sit outside `.MjjYud` (in `#iur`, above the column or in `#botstuff`) or head themselves with a
 * link into Google Images that the heading path does not read. Items of a block the heading path already read are
 * left to it. The Images tab (`udm=2`) marks its results the same way, directly in `#rso`; those are the page's
 * results, not a pack, and web packs in `#rso` always sit in `#iur`.
 */
const markedImages = (root: HTMLElement, images: (id: string) => string | undefined, done: HTMLElement[]): Item[] => {
  const marked = qsa(root, '[data-attrid="images universal"]');
  const out: Item[] = [];
  // Some pages hold a pack twice (the same `data-docid`s again); an image is one item. Two images from the same
  // page are two items.
  const seen = new Set<string>();
  for (const el of marked) {
    if (done.some((block) => isWithin(el, block)) || isImagesTabResult(el)) continue;
    const doc = el.getAttribute('data-docid');
    if (doc && seen.has(doc)) continue;
    if (doc) seen.add(doc);
    const item = universalImageItem(el, images);
    if (item) out.push(item);
  }
  return out;
};

const isImagesTabResult = (el: HTMLElement): boolean => {
  for (let p = el.parentNode; p && p.nodeType === 1; p = p.parentNode) {
    if (p.id === 'iur') return false;
    if (p.id === 'rso') return true;
  }
  return false;
};
