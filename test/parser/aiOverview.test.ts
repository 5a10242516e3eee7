import t from 'tap';
import type { AiOverview } from '../../contracts/result.js';
import { parseAiOverview } from '../../services/crawler/parser/aiOverview.js';
import { loadDom } from '../../services/crawler/parser/dom.js';
import { parse } from '../../services/crawler/parser/index.js';
import { fixturesMissing, listSerpPages, readFixtureText } from '../support/fixtures.js';

const WS = 'serp/websearcher';
const missing = fixturesMissing();

type Block = Record<string, unknown>;

const aioOf = (page: string): AiOverview => {
  const out = parse(readFixtureText(page), { captureAio: true });
  if (out.kind !== 'serp') throw new Error(out.detail);
  if (!out.serp.ai_overview) throw new Error(`no AI overview on ${page}`);
  return out.serp.ai_overview;
};

/** Paragraphs and list items, each with its text, in reading order. */
const blocksOf = (aio: AiOverview): Block[] =>
  aio.text_blocks.flatMap((b) => (b.type === 'list' ? (b.list as Block[]) : [b as Block]));

const blockStarting = (aio: AiOverview, start: string): Block | undefined =>
  blocksOf(aio).find((b) => typeof b.snippet === 'string' && b.snippet.startsWith(start));

const linkOf = (aio: AiOverview, i: number): string => String(aio.references[i]?.link ?? '');

t.test(
  'AI overview › 2025–26 chips (data-icl-uuid) still cite through the comment payloads',
  { skip: missing },
  async (t) => {
    const aio = aioOf(`${WS}/2026-01-20_why-is-the-sky-blue_7049404a2dd6.html.gz`);
    // Chip 0ae377cf…'s Sv6Kpe payloads name nesdis.noaa.gov, weather.gov and the Facebook post: the tray's first three.
    t.same(blockStarting(aio, 'The sky is blue due to Rayleigh scattering')?.reference_indexes, [0, 1, 2]);
    t.match(linkOf(aio, 0), /^https:\/\/www\.nesdis\.noaa\.gov\//);
    // Chip d0b8c3c7…: spaceplace.nasa.gov, rmg.co.uk and montrealsciencecentre.com.
    const pale = blocksOf(aio).find((b) => b.title === 'Pale Near Horizon');
    t.same(pale?.reference_indexes, [3, 4, 5]);
    t.match(linkOf(aio, 3), /^https:\/\/spaceplace\.nasa\.gov\//);
  },
);

t.test('AI overview › 2024–25 chips (.NPrrbc) cite through the W_jd source ids', { skip: missing }, async (t) => {
  t.test('my-work-is-done: each item cites the page its sentence comes from', async (t) => {
    const aio = aioOf(`${WS}/2025-02-06_my-work-is-done-why-wait_86cc98fe45fc.html.gz`);
    t.equal(aio.references[0]?.title, 'George Eastman - Wikipedia');
    t.match(aio.references[1]?.title, /^“My Work is Done\. Why Wait\?”/);
    t.match(linkOf(aio, 2), /^https:\/\/www\.eastman\.org\/about-george-eastman/);
    // Chip d630cf00… -> [49740, 79760] = list items 1 and 2 (the journal article and eastman.org).
    t.same(blockStarting(aio, '“My work is done. Why wait?” was a note')?.reference_indexes, [1, 2]);
    // 79760 = eastman.org, whose tray snippet reads "In the late 1920s, Eastman was diagnosed with a progressive…".
    t.same(blockStarting(aio, 'Eastman was diagnosed with a progressive spinal disease')?.reference_indexes, [2]);
    // 19760 = Wikipedia: "In his final two years, Eastman was in intense pain…".
    t.same(blockStarting(aio, 'In his final two years, he was in severe pain.')?.reference_indexes, [0]);
    t.same(blockStarting(aio, 'On March 14, 1932, he shot himself')?.reference_indexes, [0]);
  });

  t.test('bible translations: a chip on a heading cites for the items it lists in data-uuids', async (t) => {
    const aio = aioOf(`${WS}/2025-02-06_problems-with-bible-translations_2d6557bbff20.html.gz`);
    t.match(linkOf(aio, 0), /kencollins\.com/);
    t.match(linkOf(aio, 1), /translationjournal\.net/);
    t.match(linkOf(aio, 2), /blueletterbible\.org/);
    // [844300, 14300, 74300]: the third (beinnotof.com) is in the page's full list but not in the visible tray.
    t.same(blockStarting(aio, 'Bible translations can have problems')?.reference_indexes, [0, 1]);
    // The chip sits on the heading "Lack of the original manuscript"; its data-uuids name these two items.
    t.same(blockStarting(aio, "Translators don't know which of the many copies")?.reference_indexes, [1]);
    t.same(blockStarting(aio, 'Differences between copies are more significant')?.reference_indexes, [1]);
    t.same(blockStarting(aio, 'Scholars use the ecletic approach')?.reference_indexes, [1]);
    // Blue Letter Bible's snippet: "BHS and the Nestle-Aland text are the standard Hebrew and Greek printed texts".
    t.same(blockStarting(aio, "Translators may choose a reading that's not")?.reference_indexes, [2]);
  });

  t.test('barclays: a chip whose sources are all outside the tray adds nothing', async (t) => {
    const aio = aioOf(`${WS}/2025-02-06_barclays-job-cuts_ad1eb5594673.html.gz`);
    t.equal(aio.references.length, 3);
    // [93540, 433540, 53617]: business-standard.com, northjersey.com, and bankingdive.com (not in the tray).
    t.same(blockStarting(aio, 'Barclays has made several rounds of layoffs')?.reference_indexes, [0, 1]);
    // [53617, 43617]: bankingdive.com and qz.com, items 6 and 7 of the full list; the tray shows three.
    const cuts = blocksOf(aio).find((b) => b.title === 'Hundreds of jobs');
    t.ok(cuts, 'the item is read');
    t.notOk(cuts && 'reference_indexes' in cuts, 'no index for a source the tray does not show');
  });

  t.test('los angeles: the heading chip covers every county item', async (t) => {
    const aio = aioOf(`${WS}/2025-02-06_metropolitan-los-angeles-area_bb50002482cc.html.gz`);
    t.equal(aio.references[0]?.title, 'Greater Los Angeles - Wikipedia');
    t.same(blockStarting(aio, 'The Los Angeles metropolitan area')?.reference_indexes, [1]);
    for (const county of ['Los Angeles County', 'Orange County', 'Riverside County']) {
      t.same(blocksOf(aio).find((b) => b.title === county)?.reference_indexes, [0], county);
    }
  });

  t.test('pt-BR capture: the chip’s model is not in the page, so no index is made up', async (t) => {
    const aio = aioOf('serp/deepresearch-langgraph/google_serp_ai-tools_pt-BR.html.gz');
    t.ok(aio.text_blocks.length > 0);
    t.notOk(
      blocksOf(aio).some((b) => 'reference_indexes' in b),
      'no reference_indexes',
    );
  });
});

t.test(
  'AI overview › every reference index on every fixture page points into references',
  { skip: missing },
  async (t) => {
    for (const page of listSerpPages()) {
      const out = parse(readFixtureText(page), { captureAio: true });
      const aio = out.kind === 'serp' ? out.serp.ai_overview : undefined;
      if (!aio) continue;
      const indexes = blocksOf(aio).flatMap((b) => (b.reference_indexes as number[] | undefined) ?? []);
      t.ok(
        indexes.every((i) => Number.isInteger(i) && i >= 0 && i < aio.references.length),
        page,
      );
    }
  },
);

/**
 * A minimal 2024–25 overview: one sentence, one chip, a two-item tray, the models and the hidden full list, inserted
 * by a `jsl.dh` script as in a plain HTTP capture, or already in the document as in a rendered one.
 */
const legacyPage = (
  chipIds: string,
  listIds: string,
  listHrefs: string[],
  where: 'script' | 'dom' = 'script',
): string => {
  const cid = '00000000-0000-4000-8000-000000000001';
  const items = listHrefs
    .map(
      (h) =>
        String.raw`\x3cul\x3e\x3cli jsname\x3d\x22XAYRPc\x22 class\x3d\x22LLtSOc\x22\x3e\x3ca class\x3d\x22KEVENd\x22 aria-label\x3d\x22x\x22 href\x3d\x22` +
        h +
        String.raw`\x22\x3e\x3c/a\x3e\x3c/li\x3e\x3c/ul\x3e`,
    )
    .join('');
  return `<html><body><div class="YzCcne"><div class="WaaZC"><div class="rPeykc">
<span data-huuid="71"><span>First sentence.</span><span class="pjBG2e" data-cid="${cid}"><span class="UV3uM">&nbsp;<div class="NPrrbc" data-cid="${cid}" data-uuids="71"><div role="button" aria-label="View related links"></div></div></span></span><div id="${cid}" style="display:none"></div><div style="display:none" jscontroller="g4PEk" jsdata="ZtRa8d;_;K1"></div></span>
<span data-huuid="72"><span>Second sentence.</span></span>
</div></div>
<ul><li class="LLtSOc"><a class="KEVENd" aria-label="A" href="https://a.example/x#:~:text=a"></a></li><li class="LLtSOc"><a class="KEVENd" aria-label="B" href="https://b.example/y"></a></li></ul>
<div id="p1"></div></div>
${where === 'dom' ? `<div style="display:none"><div jscontroller="g4PEk" jsname="v1Xhtd" jsdata="P58Gu;_;K2">${listHrefs.map((h) => `<ul><li class="LLtSOc"><a class="KEVENd" href="${h}"></a></li></ul>`).join('')}</div></div>` : ''}
<script>(function(){window['W_jd']['K1']=["${cid}",[${chipIds}]];})();(function(){window['W_jd']['K2']=[[${listIds}],[]];})();${where === 'script' ? `(function(){window.jsl.dh('p1','\\x3cdiv jscontroller\\x3d\\x22g4PEk\\x22 jsname\\x3d\\x22v1Xhtd\\x22 jsdata\\x3d\\x22P58Gu;_;K2\\x22\\x3e${items}\\x3c/div\\x3e');})();` : ''}</script>
</body></html>`;
};

const firstParagraph = (html: string): Block | undefined =>
  parseAiOverview(loadDom(html), html)?.text_blocks[0] as Block | undefined;

t.test('AI overview › 2024–25 ids map by their position in the source list, and only when it fits', async (t) => {
  const hrefs = ['https://a.example/x', 'https://b.example/y'];
  const p = firstParagraph(legacyPage('22,11', '11,22', hrefs));
  t.equal(p?.snippet, 'First sentence. Second sentence.');
  t.same(p?.reference_indexes, [1, 0], '22 is the list’s second item (b), 11 its first (a), in the chip’s order');
  t.same(firstParagraph(legacyPage('22', '22,11', hrefs))?.reference_indexes, [0], 'the order is the list’s');
  t.same(
    firstParagraph(legacyPage('22,11', '11,22', hrefs, 'dom'))?.reference_indexes,
    [1, 0],
    'a list already in the document (a rendered capture) reads the same',
  );
  const unfit = firstParagraph(legacyPage('11', '11,22,33', hrefs));
  t.notOk(unfit && 'reference_indexes' in unfit, 'three ids for two items: no index');
  const uncited = firstParagraph(legacyPage('44', '11,22', hrefs));
  t.notOk(uncited && 'reference_indexes' in uncited, 'an id the list lacks: no index');
  const noRaw = parseAiOverview(loadDom(legacyPage('11', '11,22', hrefs)))?.text_blocks[0] as Block | undefined;
  t.notOk(noRaw && 'reference_indexes' in noRaw, 'without the raw page there are no models: no index');
});
