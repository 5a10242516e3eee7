import { hasClass, isGoogleInternal, textOf, unwrapLink } from '../dom.js';
import type { HTMLElement } from '../html.js';
import { closest, qs, qsa } from '../select.js';

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

export const headedBlocks = (root: HTMLElement): Record<string, Array<Record<string, string>>> => {
  const found: Record<string, Array<Record<string, string>>> = {};
  const add = (name: string, items: Array<Record<string, string>>) => {
    if (items.length) found[name] = [...(found[name] ?? []), ...items];
  };
  // The X/Twitter carousel is a `g-section-with-header` whose header links to the account; it can sit inside the
  // one block of a knowledge-panel layout, so it is looked for on its own.
  const twitter = qsa(root, 'g-section-with-header').filter((section) => {
    const header = qs(section, 'h3');
    const href = header ? (closest(header, 'a')?.getAttribute('href') ?? '') : '';
    return /\/\/(?:[\w-]+\.)?(?:twitter|x)\.com\//.test(href);
  });
  for (const section of twitter) add('twitter_results', cardsOf(section));
  for (const block of topBlocks(root)) {
    if (twitter.some((s) => s === block || isWithin(s, block))) continue;
    const heading = headingOf(block);
    if (qs(block, '.gws-plugins-horizon-jobs__li-ed')) {
      add('jobs_results', jobsOf(block));
      continue;
    }
    const match = HEADINGS.find(([, re]) => re.test(heading));
    if (match) {
      add(match[0], cardsOf(block));
      continue;
    }
    if (qs(block, 'a.WlydOe') && qs(block, 'g-section-with-header')) add('top_stories', cardsOf(block));
    else if (qs(block, '.RzdJxc') || qs(block, 'video-voyager')) add('inline_videos', videosOf(block));
  }
  return found;
};

/**
 * A block recognised only by its video items (`.RzdJxc`, `video-voyager`). When the block also holds organic
 * results (the one shell of a 2021 mobile page), only the items are read, one card each.
 */
const videosOf = (block: HTMLElement): Array<Record<string, string>> => {
  if (!qs(block, 'a h3')) return cardsOf(block);
  const seen = new Set<string>();
  return qsa(block, '.RzdJxc, video-voyager').flatMap((item) => {
    const card = cardsOf(item)[0];
    if (!card || seen.has(card.link as string)) return [];
    seen.add(card.link as string);
    return [card];
  });
};

/** Cards of a carousel or list: one per distinct target, titled by its heading or its own text. */
export const cardsOf = (block: HTMLElement): Array<Record<string, string>> => {
  const out: Array<Record<string, string>> = [];
  const seen = new Set<string>();
  for (const a of qsa(block, 'a[href]')) {
    const link = unwrapLink(a.getAttribute('href'));
    if (!link) continue;
    // A video's "key moments" link to the same video at a time offset (`&t=765`): one card per video.
    const key = link.replace(/([?&])t=\d+s?(&|$)/, '$1').replace(/[?&]$/, '');
    if (!/^https?:/.test(link) || isGoogleInternal(link) || seen.has(key)) continue;
    const title =
      textOf(qs(a, '[role="heading"]')) ||
      textOf(qs(a, '.mCBkyc')) ||
      textOf(qs(a, 'h3')) ||
      a.getAttribute('aria-label') ||
      textOf(a);
    if (!title || title.length < 2) continue;
    seen.add(key);
    const card: Record<string, string> = { title: title.slice(0, 300), link };
    const source = textOf(qs(a, '.MgUUmf') ?? qs(a, '.CEMjEf') ?? qs(a, '.NUnG9d') ?? qs(a, 'cite'));
    if (source) card.source = source;
    const date = textOf(qs(a, '.OSrXXb') ?? qs(a, '.ZE0LJd') ?? qs(a, '.rbYSKb') ?? qs(a, '.LfVVr'));
    if (date) card.date = date;
    const duration = textOf(qs(a, '.J1mWY') ?? qs(a, '.c8rnLc'));
    if (duration) card.duration = duration;
    out.push(card);
  }
  return out;
};

const jobsOf = (block: HTMLElement): Array<Record<string, string>> =>
  qsa(block, '.gws-plugins-horizon-jobs__li-ed').flatMap((li) => {
    const title = textOf(qs(li, '[role="heading"]') ?? qs(li, '.BjJfJf'));
    if (!title) return [];
    const company = textOf(qs(li, '.vNEEBe'));
    const location = textOf(qs(li, '.Qk80Jf'));
    return [{ title, ...(company ? { company_name: company } : {}), ...(location ? { location } : {}) }];
  });

/** Shopping (product listing) ads: `.pla-unit` in a top or right-hand carousel. */
export const shoppingResults = (root: HTMLElement): Array<Record<string, string>> | undefined => {
  const out: Array<Record<string, string>> = [];
  for (const unit of qsa(root, '.pla-unit')) {
    if (hasClass(unit, 'pla-unit-container')) continue;
    const a = qs(unit, 'a[href]');
    const title = textOf(qs(unit, '.pymv4e') ?? qs(unit, '.orXoSd') ?? qs(unit, '[role="heading"]'));
    if (!title) continue;
    const item: Record<string, string> = { title };
    const link = a?.getAttribute('data-pcu')?.split(',')[0] ?? unwrapLink(a?.getAttribute('href'));
    if (link) item.link = link;
    const price = textOf(qs(unit, '.e10twf') ?? qs(unit, '.T4OwTb'));
    if (price) item.price = price;
    const source = textOf(qs(unit, '.LbUacb') ?? qs(unit, '.zPEcBd'));
    if (source) item.source = source;
    out.push(item);
  }
  return out.length ? out : undefined;
};
