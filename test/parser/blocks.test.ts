import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import type { ParsedSerp } from '../../contracts/result.js';
import { parse } from '../../parser/index.js';
import { fixturesDir, fixturesMissing, listSerpPages, readFixtureText } from '../support/fixtures.js';
import { serpOfFixture } from './compare.js';

/**
 * The items of headed blocks (videos, top stories, perspectives, forums, recipes, jobs, images, X/Twitter,
 * shopping) under SerpApi's field names. The values pinned here were read off the raw pages by hand.
 */
type Item = Record<string, unknown>;

const BLOCKS = [
  'top_stories',
  'inline_videos',
  'perspectives',
  'discussions_and_forums',
  'recipes_results',
  'jobs_results',
  'inline_images',
  'shopping_results',
] as const;

const serpOf = (page: string): ParsedSerp => serpOfFixture(`serp/${page}`);

const itemsOf = (serp: ParsedSerp, block: string): Item[] => (serp.serp_features[block] as Item[] | undefined) ?? [];

const SKY = 'websearcher/2026-01-20_why-is-the-sky-blue_7049404a2dd6.html.gz';

t.test(
  'perspectives (2026) › title, author, source, date and engagement each in its own field',
  { skip: fixturesMissing() },
  async (t) => {
    const items = itemsOf(serpOf(SKY), 'perspectives');
    t.equal(items.length, 12);
    t.match(items[0], {
      title: 'Why is the Sky Blue? Credit to Discover.',
      link: 'https://www.facebook.com/ceressoft/posts/why-is-the-sky-blue-credit-to-discover/1445048500957636/',
      date: '1 month ago',
      extensions: ['90+ reactions'],
      author: 'ceressoft',
      source: 'Facebook',
      thumbnails: [/^data:image\/jpeg;base64,/],
    });
    // The YouTube card carries a player before the card proper; its title is the heading alone, not
    // "The REAL Reason the Sky Looks BlueYouTube·Math and Science·Dec 9, 2025".
    t.match(items[2], {
      title: 'The REAL Reason the Sky Looks Blue',
      link: 'https://www.youtube.com/shorts/HZTGNh6pVXY',
      date: '1 month ago',
      extensions: ['5.4K+ views'],
      author: 'Math and Science',
      source: 'YouTube',
      duration: '1:21',
    });
    t.match(items[3], {
      title: 'ELI5: Why does the sky appear blue even tho violet has a shorter wavelength than blue?',
      snippet: /^There are a few reasons\. First, the sun produces/,
      date: '1 month ago',
      extensions: ['20+ comments'],
      author: 'r/explainlikeimfive',
      source: 'Reddit',
    });
    t.notOk(String(items[3]?.snippet).includes('Popular comment'), 'the snippet label is no part of the snippet');
  },
);

t.test(
  'inline_videos › every layout gives title, platform, channel, duration and date apart',
  { skip: fixturesMissing() },
  async (t) => {
    // 2023 desktop: the heading holds title and meta line together.
    t.match(itemsOf(serpOf('serp-parser-zlurad/desktop/matrix.html.gz'), 'inline_videos')[0], {
      position: 1,
      title: 'The Matrix (1999) Official Trailer #1 - Sci-Fi Action Movie',
      link: 'https://www.youtube.com/watch?v=vKQi3bBA1y8',
      platform: 'YouTube',
      channel: 'Rotten Tomatoes Classic Trailers',
      duration: '2:20',
      date: 'Nov 19, 2013',
      thumbnail: /^https:\/\/i\.ytimg\.com\/vi\/vKQi3bBA1y8\//,
    });
    // 2021 desktop: the visible pieces are aria-hidden under an aria-label that runs them together.
    t.match(itemsOf(serpOf('serp-parser-zlurad/desktop/old/coffee.html.gz'), 'inline_videos')[0], {
      title: 'Miguel - Coffee (Official Video)',
      platform: 'YouTube',
      channel: 'MiguelVEVO',
      duration: '4:55',
      date: 'Jun 16, 2015',
    });
    // 2023 mobile and a Portuguese 2025 page: no `cite`, the platform is the piece before the separator.
    t.match(itemsOf(serpOf('serp-parser-zlurad/mobile/coffee.html.gz'), 'inline_videos')[1], {
      title: 'Miguel - Coffee (Official Video)',
      platform: 'YouTube',
      channel: 'MiguelVEVO',
      date: 'Jun 16, 2015',
    });
    t.match(itemsOf(serpOf('deepresearch-langgraph/google_serp_ai-tools_pt-BR.html.gz'), 'inline_videos')[0], {
      title: 'Create 100 LONG VIDEOS IN MINUTES with 3 FREE AI ...',
      platform: 'YouTube',
      channel: 'Luiz Koerich',
      duration: '14:44',
      date: '2 dias atrás',
    });
    // 2024: a publisher's own player has a platform and no channel; the spoken duration printed beside the date
    // ("1 minute, 7 seconds") is no date.
    const kjellberg = serpOf('serp_parser-kjellberg-ruby/full_html_response.html.gz');
    const usaToday = itemsOf(kjellberg, 'inline_videos')[0];
    t.match(usaToday, { platform: 'USA Today', duration: '1:07', date: '2 days ago' });
    t.notOk(usaToday && 'channel' in usaToday, 'no channel where the card shows none');
    t.match(itemsOf(serpOf('websearcher/2024-03-13_kaka-boots_880beebb66bb.html.gz'), 'inline_videos')[1], {
      link: 'https://www.tiktok.com/@prodirectsoccer/video/7309198096108490017',
      platform: 'TikTok',
      channel: 'prodirectsoccer',
      duration: '0:26',
      date: 'Dec 5, 2023',
    });
  },
);

t.test('top_stories › source, title and date from 2021 to 2024', { skip: fixturesMissing() }, async (t) => {
  const google = itemsOf(serpOf('serp-parser-zlurad/desktop/google.html.gz'), 'top_stories');
  t.match(google[0], {
    title: 'Google Nest speakers will now chime instead of talk when controlling smart home devices',
    link: 'https://www.theverge.com/2023/4/21/23692794/google-nest-smart-speaker-new-chime-feature',
    source: 'The Verge',
    date: '26 mins ago',
  });
  // TechCrunch is shown as a logo without text: no source rather than a wrong one.
  t.match(google[3], { title: 'Google consolidates AI research divisions into Google DeepMind', date: '1 day ago' });
  t.notOk(google[3] && 'source' in google[3], 'a logo-only publisher gives no source');
  // 2021 mobile: one heading wraps source, title and date, each in a child of its own.
  t.match(itemsOf(serpOf('serp-parser-zlurad/mobile/old/hotels.html.gz'), 'top_stories')[0], {
    title: "The First Hotel on NYC's Roosevelt Island Is Now Open",
    source: 'Travel + Leisure',
    date: '1 day ago',
  });
  // 2024: a video story; "Video" is a badge, the date is the last piece.
  t.match(itemsOf(serpOf('serp_parser-kjellberg-ruby/full_html_response.html.gz'), 'top_stories')[2], {
    title: 'Former President Trump rallies supporters in Grand Rapids',
    source: 'YouTube',
    date: '17 hours ago',
    duration: '1:56:41',
  });
});

t.test('discussions_and_forums › site, date and post count apart', { skip: fixturesMissing() }, async (t) => {
  const items = itemsOf(
    serpOf('websearcher/2024-03-13_men-s-old-school-wears_760310a7eec2.html.gz'),
    'discussions_and_forums',
  );
  t.match(items[1], {
    title: 'What old timey fashion trends for men need to make a comeback? : r/AskMen - Reddit',
    source: 'www.reddit.com',
    date: 'Mar 19, 2016',
    extensions: ['38 posts'],
  });
  t.match(items[0], { source: 'www.reddit.com', date: 'Sep 18, 2022' });
  // One piece after the site: the line's aria-label ("www.quora.com, 51 posts") says it is no date.
  const quora = itemsOf(serpOf('serp-parser-zlurad/mobile/paris.html.gz'), 'discussions_and_forums')[0];
  t.match(quora, { source: 'www.quora.com', extensions: ['51 posts'] });
  t.notOk(quora && 'date' in quora, 'a post count is not taken for a date');
});

t.test(
  'recipes_results › rating and reviews as numbers, time and ingredients apart',
  { skip: fixturesMissing() },
  async (t) => {
    t.match(
      itemsOf(serpOf('websearcher/2024-03-13_biscuit-and-gravy-recipe_b938dae25618.html.gz'), 'recipes_results')[0],
      {
        title: 'Easy Sausage Gravy and Biscuits',
        link: 'https://www.allrecipes.com/recipe/216391/easy-sausage-gravy-and-biscuits/',
        source: 'Allrecipes',
        rating: 4.8,
        reviews: 1300,
        total_time: '15 min',
        ingredients: ['Pork sausage crumbles', 'buttermilk biscuits', 'flour', 'black pepper'],
      },
    );
    // A decimal-comma page: "5,0" and "(2,3K)".
    t.match(
      itemsOf(serpOf('juremrzek-google-scraper/pasta_how-long-to-cook-pasta-for.html.gz'), 'recipes_results')[2],
      {
        title: 'How to Cook Pasta',
        rating: 5,
        reviews: 2300,
        total_time: '18 mins',
        ingredients: ['Pasta'],
      },
    );
    // "No reviews": no rating, and the time is still found.
    const maki = itemsOf(serpOf('juremrzek-google-scraper/sushi.html.gz'), 'recipes_results')[0];
    t.match(maki, {
      title: 'Maki sushi',
      source: 'Okusno.je',
      total_time: '1 hr 17 mins',
      ingredients: ['Tuna', 'kumara'],
    });
    t.notOk(maki && 'rating' in maki, 'no rating where none is shown');
  },
);

t.test('jobs_results, inline_images, twitter_results', { skip: fixturesMissing() }, async (t) => {
  t.match(itemsOf(serpOf('websearcher/2024-03-13_koch-hiring-mississippi_6dc5bc34ff55.html.gz'), 'jobs_results')[0], {
    title: 'Electrical and instrumentation',
    company_name: 'Koch Industries',
    location: 'New Augusta, MS',
    via: 'via Talent.com',
    extensions: [
      '1 day ago',
      '42.83–44.38 an hour',
      'Full-time',
      'No degree mentioned',
      'Health insurance',
      'Dental insurance',
      'Paid time off',
    ],
  });
  // 2025: title and site are named by the empty link's aria-labelledby.
  t.match(
    itemsOf(serpOf('websearcher/2025-02-06_metropolitan-los-angeles-area_bb50002482cc.html.gz'), 'inline_images')[0],
    {
      title: 'Los Angeles metropolitan area map',
      source: 'https://www.carolmendelmaps.com/mapla/la1.html',
      source_name: 'Carol Mendel Maps',
      thumbnail: /^https:\/\/encrypted-tbn0\.gstatic\.com\//,
    },
  );
  const twitter = serpOf('websearcher/2024-03-13_oscar-the-grouch_7d621e868493.html.gz').serp_features.twitter_results;
  t.match(twitter, {
    title: 'Oscar the Grouch (@OscarTheGrouch) · X',
    link: /^https:\/\/twitter\.com\/OscarTheGrouch\?/,
    displayed_link: 'https://twitter.com/OscarTheGrouch',
    tweets: [
      {
        link: /\/status\/1766865706149130365\?/,
        snippet: 'In my house, every night is Oscar night. #Oscar',
        published_date: '2 days ago',
      },
      { published_date: '3 days ago' },
      { published_date: 'Mar 5, 2024', thumbnail: /^data:image\/jpeg;base64,/ },
    ],
  });
});

t.test(
  'shopping_results › merchant link, price without the old price, numbers',
  { skip: fixturesMissing() },
  async (t) => {
    const old = itemsOf(serpOf('serp-parser-zlurad/desktop/old/dell.html.gz'), 'shopping_results');
    // 2021: the name comes in a short and a long cut side by side; the longer is the name.
    t.match(old[0], {
      position: 1,
      title: 'Dell XPS 13 Laptop - w/ Windows 11 & 11th gen Intel Core - 13.3" FHD Screen - 8GB - 256G',
      link: 'https://www.dell.com/en-us/shop/dell-laptops/xps-13-laptop/spd/xps-13-9305-laptop/xn9305ezwkh',
      price: '$649.99',
      extracted_price: 649.99,
      source: 'Dell',
      rating: 4.1,
      reviews: 596,
    });
    // "$1,673.89" followed by the struck-through "1,762" in a child span.
    t.match(old[7], { price: '$1,673.89', extracted_price: 1673.89, source: 'Office Depot', reviews: 5000 });
    // Mobile units only link through Google's ad redirect, made absolute.
    t.match(itemsOf(serpOf('serp-parser-zlurad/mobile/dell.html.gz'), 'shopping_results')[0], {
      link: /^https:\/\/www\.google\.com\/aclk\?/,
      price: '$1,034.98',
      source: 'Walmart',
    });
  },
);

/** Every string of an item, with the path to it. */
const strings = (value: unknown, path: string, out: Array<[string, string]> = []): Array<[string, string]> => {
  if (typeof value === 'string') out.push([path, value]);
  else if (Array.isArray(value)) for (const [i, v] of value.entries()) strings(v, `${path}[${i}]`, out);
  else if (value && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) strings(v, `${path}.${k}`, out);
  return out;
};

const problems = (item: Item, where: string): string[] => {
  const out: string[] = [];
  for (const [path, s] of strings(item, where)) {
    if (s.trim() === '' || s !== s.trim()) out.push(`${path}: empty or untrimmed`);
  }
  for (const [k, v] of Object.entries(item))
    if (Array.isArray(v) && v.length === 0) out.push(`${where}.${k}: empty list`);
  for (const key of ['link', 'source'] as const) {
    const v = item[key];
    const isUrl = key === 'link' || (typeof v === 'string' && /^[a-z]+:/i.test(v));
    if (typeof v === 'string' && isUrl && !/^https?:\/\/[^\s]+$/.test(v))
      out.push(`${where}.${key}: not an absolute http(s) URL`);
  }
  for (const pic of [item.thumbnail, ...((item.thumbnails as unknown[]) ?? [])]) {
    if (
      pic !== undefined &&
      !(typeof pic === 'string' && (/^https?:\/\//.test(pic) || /^data:image\/[a-z+]+;base64,.{150}/.test(pic)))
    )
      out.push(`${where}: thumbnail is neither a URL nor a picture`);
  }
  const title = typeof item.title === 'string' ? item.title : '';
  // Parts glued without a space ("BlueYouTube·Math"), or a date or duration run onto the title.
  if (/\S[·•]|[·•]\S/.test(title)) out.push(`${where}.title glues parts with a separator: ${title}`);
  for (const key of ['date', 'duration', 'published_date'] as const) {
    const v = item[key];
    if (typeof v === 'string' && title.endsWith(v)) out.push(`${where}.title ends with its ${key}: ${title}`);
    if (typeof v === 'string' && title && title.startsWith(v)) out.push(`${where}.${key} is the title`);
  }
  for (const key of ['source', 'platform', 'channel', 'author'] as const) {
    const v = item[key];
    if (typeof v === 'string' && new RegExp(`${v.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s?[·•]`).test(title))
      out.push(`${where}.title carries its ${key}: ${title}`);
  }
  const date = item.date ?? item.published_date;
  if (typeof date === 'string' && /[·•]/.test(date)) out.push(`${where}.date carries more than a date: ${date}`);
  for (const key of ['rating', 'reviews', 'extracted_price', 'position'] as const) {
    const v = item[key];
    if (v !== undefined && !(typeof v === 'number' && Number.isFinite(v) && v >= 0))
      out.push(`${where}.${key}: not a number`);
  }
  if (typeof item.rating === 'number' && item.rating > 5) out.push(`${where}.rating above 5`);
  if (item.reviews !== undefined && !Number.isInteger(item.reviews)) out.push(`${where}.reviews: not a count`);
  return out;
};

t.test('every block item of every fixture page is clean', { skip: fixturesMissing() }, async (t) => {
  const seen: Record<string, number> = {};
  const found: string[] = [];
  for (const page of listSerpPages()) {
    const out = parse(readFixtureText(page), { captureAio: false });
    if (out.kind !== 'serp') continue;
    const features = out.serp.serp_features;
    for (const block of BLOCKS) {
      const items = features[block] as Item[] | undefined;
      if (!items) continue;
      seen[block] = (seen[block] ?? 0) + items.length;
      items.forEach((item, i) => {
        const where = `${page} ${block}[${i}]`;
        found.push(...problems(item, where));
        if (block === 'inline_images') {
          if (!item.source) found.push(`${where}: no source page`);
        } else if (!item.title) found.push(`${where}: no title`);
        if (block !== 'jobs_results' && block !== 'inline_images' && !item.link) found.push(`${where}: no link`);
      });
      if (block === 'inline_videos' || block === 'shopping_results') {
        const positions = items.map((item) => item.position);
        if (positions.some((p, i) => p !== i + 1)) found.push(`${page} ${block}: positions do not run 1..N`);
      }
    }
    const twitter = features.twitter_results as Item | undefined;
    if (twitter) {
      seen.twitter_results = (seen.twitter_results ?? 0) + 1;
      found.push(...problems(twitter, `${page} twitter_results`));
      for (const [i, tweet] of ((twitter.tweets as Item[]) ?? []).entries()) {
        found.push(...problems(tweet, `${page} twitter_results.tweets[${i}]`));
        if (!/^https?:\/\//.test(String(tweet.link))) found.push(`${page} tweet ${i}: no link`);
      }
    }
  }
  t.same(found, [], 'no item breaks an invariant');
  // The fixture pages hold every block type; a block that vanished would make the checks above vacuous.
  for (const block of [...BLOCKS, 'twitter_results']) t.ok((seen[block] ?? 0) > 0, `${block} items were checked`);
});

interface WsResult {
  type: string;
  title?: string | null;
  url?: string | null;
  text?: string | null;
  cite?: string | null;
  details?: { items?: string[]; duration?: string; ingredients?: string } | null;
}

/** WebSearcher's snapshot components → our blocks (same mapping as expected.ts). */
const WS_BLOCKS: Record<string, string> = {
  videos: 'inline_videos',
  perspectives: 'perspectives',
  discussions_and_forums: 'discussions_and_forums',
  recipes: 'recipes_results',
  jobs: 'jobs_results',
};

const squash = (s: string | null | undefined): string => (s ?? '').replace(/\s+/g, ' ').trim();

t.test(
  'titles and links agree with WebSearcher where it has the same block',
  { skip: fixturesMissing() },
  async (t) => {
    let compared = 0;
    for (const page of listSerpPages().filter((p) => p.includes('/websearcher/'))) {
      const snapshot = join(fixturesDir, page.replace(/\.html\.gz$/, '.expected.websearcher-snapshot.json'));
      if (!existsSync(snapshot)) continue;
      const results = (JSON.parse(readFileSync(snapshot, 'utf8')) as { results: WsResult[] }).results;
      const features = serpOf(page.replace(/^serp\//, '')).serp_features;
      for (const [type, block] of Object.entries(WS_BLOCKS)) {
        const theirs = results.filter((r) => r.type === type);
        if (!theirs.length) continue;
        const ours = (features[block] as Item[] | undefined) ?? [];
        if (type === 'jobs') {
          // WebSearcher keeps the job titles as the items of one component.
          t.same(
            ours.map((j) => j.title),
            theirs[0]?.details?.items,
            `${page}: job titles`,
          );
          compared++;
          continue;
        }
        t.equal(ours.length, theirs.length, `${page}: ${block} count`);
        theirs.forEach((r, i) => {
          const item = ours[i] ?? {};
          t.equal(item.link, r.url, `${page}: ${block}[${i}] link`);
          // WebSearcher runs a video's title into its platform, channel and duration; ours is where its text starts.
          if (type === 'videos') t.ok(squash(r.title).startsWith(String(item.title)), `${page}: ${block}[${i}] title`);
          else t.equal(item.title, squash(r.title), `${page}: ${block}[${i}] title`);
          if (type === 'recipes') {
            t.equal(item.total_time, r.details?.duration, `${page}: ${block}[${i}] total time`);
            t.equal(
              (item.ingredients as string[] | undefined)?.join(', '),
              r.details?.ingredients,
              `${page}: ${block}[${i}] ingredients`,
            );
          }
          // WebSearcher keeps a forum's line whole ("www.reddit.com · Mar 19, 2016 · 38 posts").
          if (type === 'discussions_and_forums') {
            const line = [item.source, item.date, ...((item.extensions as string[]) ?? [])].filter(Boolean).join(' · ');
            t.equal(line, squash(r.cite), `${page}: ${block}[${i}] site, date, posts`);
          }
          compared++;
        });
      }
      const tweets = results.filter((r) => r.type === 'twitter_cards' && r.url?.includes('/status/'));
      if (tweets.length) {
        const ours = ((features.twitter_results as Item | undefined)?.tweets as Item[] | undefined) ?? [];
        tweets.forEach((r, i) => {
          t.equal(decodeURIComponent(String(ours[i]?.link)), r.url, `${page}: tweet ${i} link`);
          t.equal(ours[i]?.snippet, squash(r.text), `${page}: tweet ${i} text`);
          compared++;
        });
      }
    }
    t.ok(compared > 30, `${compared} items compared`);
  },
);

t.test(
  'inline_images › packs found by their items\' marker (data-attrid="images universal"), not by a heading',
  { skip: fixturesMissing() },
  async (t) => {
    // 2024, in #iur under a heading that is a link into Google Images: title and site name printed in the link.
    const folders = itemsOf(serpOf('websearcher/2024-03-13_file-folder_f10d116b26c6.html.gz'), 'inline_images');
    t.same(Object.keys(folders[1] ?? {}), ['title', 'source', 'source_name', 'thumbnail']);
    t.match(folders[1], {
      title: 'Smead Reversible Tab File Folders, 1/2-Cut Tab (15394)',
      source: 'https://www.amazon.com/Smead-Reversible-Folder-Assorted-15394/dp/B00FSAO4UO',
      source_name: 'Amazon',
      thumbnail: /^data:image\/jpeg;base64,/,
    });
    // 2022 (ru): no title or site shown; the image opens in Google Images (`#imgrc=<docid>`), the "Продукт" badge
    // inside that link is no name.
    const ru = itemsOf(serpOf('kokoc-google-parser/2022-03-31-1.decoded.html.gz'), 'inline_images');
    t.equal(ru.length, 10);
    t.match(ru[0], {
      link: /^https:\/\/www\.google\.com\/search\?q=%D0%BF%D0%BE%D0%B4%D0%B8%D1%83%D0%BC.*&tbm=isch&.*#imgrc=RIFvyu9HxQIADM$/,
      source: 'https://utamebel-shop.ru/gostinye/milan-14-podium-up-1/',
      thumbnail: /^data:image\/jpeg;base64,/,
    });
    t.notOk('title' in (ru[0] ?? {}) || 'source_name' in (ru[0] ?? {}), 'no title or site where none is shown');
    // 2023 desktop: items without any link; the "Video" badge is no title.
    const london = itemsOf(serpOf('serp-parser-zlurad/desktop/hotels-london.html.gz'), 'inline_images');
    t.equal(london.length, 10);
    t.same(Object.keys(london[0] ?? {}), ['source', 'thumbnail']);
    t.match(london[0], {
      source: 'https://www.travelandleisure.com/worlds-best/best-london-hotels-2022',
      thumbnail: /^https:\/\/encrypted-tbn0\.gstatic\.com\//,
    });
    // The page holds its pack twice (the same data-docid values again): three images, not six.
    t.same(
      itemsOf(serpOf('kokoc-google-parser/bad_json_2024-05-07.html.gz'), 'inline_images').map((i) => i.title),
      [
        'Диван Доминик-155 купить в Москве всего за 43690 руб. в ...',
        'Диван прямой Доминик-155',
        '⭐⭐⭐⭐⭐ Диван Доминик-155 купить в Москве всего за 43690 руб. в интернет-магазине «Диваны и Кресла»',
      ],
    );
    // A pack the heading path already read is not read again.
    t.equal(itemsOf(serpOf('serp-parser-zlurad/mobile/hotels-london.html.gz'), 'inline_images').length, 4);
    // WebSearcher reads the same marked packs (2024-03): its title is ours and the site name run together.
    let compared = 0;
    for (const page of listSerpPages().filter((p) => p.includes('/websearcher/'))) {
      const snapshot = join(fixturesDir, page.replace(/\.html\.gz$/, '.expected.websearcher-snapshot.json'));
      if (!existsSync(snapshot) || !readFixtureText(page).includes('images universal')) continue;
      const theirs = (JSON.parse(readFileSync(snapshot, 'utf8')) as { results: WsResult[] }).results.filter(
        (r) => r.type === 'images' && r.url,
      );
      const ours = itemsOf(serpOf(page.replace(/^serp\//, '')), 'inline_images');
      t.equal(ours.length, theirs.length, `${page}: inline_images count`);
      theirs.forEach((r, i) => {
        t.equal(ours[i]?.source, r.url, `${page}: inline_images[${i}] source`);
        t.equal(`${ours[i]?.title} ${ours[i]?.source_name}`, squash(r.title), `${page}: inline_images[${i}] title`);
        compared++;
      });
    }
    t.equal(compared, 24, 'the marked packs of five WebSearcher pages');
    // The Images tab marks its results the same way; they are the page's results, not a pack.
    for (const page of [
      'debug-dumps-2025-2026/chstudio_2026-04-01_cat_images-udm2_ko.html.gz',
      'search-navigator/20250614-image-château-chalon-tokyo.html.gz',
    ])
      t.notOk(serpOf(page).serp_features.inline_images, `${page}: no inline images`);
  },
);
