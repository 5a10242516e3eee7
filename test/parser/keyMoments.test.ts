import t from 'tap';
import { fixturesMissing } from '../support/fixtures.js';
import { serpOfFixture as serpOf } from './compare.js';

/** A video's key moments (`key_moments[] {text, time, link, thumbnail}`), under a video result and a video card. */
type Moment = { text: string; time: string; link: string; thumbnail?: string };

t.test('key moments › under a 2026 video result, each once and in order', { skip: fixturesMissing() }, async (t) => {
  const serp = serpOf('serp/websearcher/2026-02-05_why-is-the-sky-blue_45b6e019bfa2.html.gz');
  const video = serp.organic_results.find((r) => r.link === 'https://www.youtube.com/watch?v=ehUIlhKhzDA');
  const moments = (video?.key_moments ?? []) as Moment[];
  // Google prints them twice (a strip and a list); the page says "6 key moments in this video"
  t.same(
    moments.map((m) => [m.time, m.text]),
    [
      ['00:12', "How the sun's light reaches Earth"],
      ['00:35', 'How light energy travels in waves'],
      ['01:39', 'Why is the sky different color at sunset?'],
      ['02:00', 'Why is the sky red?'],
      ['02:12', 'Aerosols'],
      ['02:27', 'Conclusion'],
    ],
  );
  t.equal(moments[2]?.link, 'https://www.youtube.com/watch?v=ehUIlhKhzDA&t=99', 'a link into the video at that time');
  t.match(moments[0]?.thumbnail, /^https:\/\/encrypted-tbn0\.gstatic\.com\/images\?q=tbn:/);
  t.equal(
    serp.organic_results.filter((r) => r.key_moments).length,
    1,
    'only the video result has key moments; sitelinks are not taken for them',
  );
});

t.test('key moments › under a 2024 video card, matched to its own video', { skip: fixturesMissing() }, async (t) => {
  const serp = serpOf('serp/juremrzek-google-scraper/pasta_how-long-to-cook-pasta-for.html.gz');
  const videos = (serp.serp_features.inline_videos ?? []) as Array<{ link: string; key_moments?: Moment[] }>;
  const ramsay = videos.find((v) => v.link === 'https://www.youtube.com/watch?v=UYhKDweME3A');
  t.same(
    ramsay?.key_moments?.map((m) => `${m.time} ${m.text}`),
    ['00:38 Bring it back up to the boil', '01:00 Drain the pasta', '01:03 A light seasoning'],
  );
  t.ok(
    videos.filter((v) => v !== ramsay).every((v) => v.key_moments === undefined),
    "the other cards carry no key moments in the page's markup, and none of this one's",
  );
});
