import t from 'tap';
import { parse } from '../../parser/index.js';
import { fixturesMissing, listSerpPages, readFixtureText } from '../support/fixtures.js';

type Ad = Record<string, unknown>;

const adsOf = (file: string): Ad[] => {
  const out = parse(readFixtureText(file), { captureAio: false });
  if (out.kind !== 'serp') return [];
  return (out.serp.serp_features.ads as Ad[] | undefined) ?? [];
};

const missing = fixturesMissing();

t.test('ads › link is the landing page, tracking_link is Google’s click link', { skip: missing }, async (t) => {
  // 2023 Vietnamese page: data-pcu names only the host ("https://www.apple.com/"); href is the landing page.
  t.match(adsOf('serp/nimble-google-scraper-ruby-goose97/iphone_store.html.gz')[0], {
    title: 'Apple Việt Nam - Cửa hàng chính thức',
    link: 'https://www.apple.com/vn/store',
    tracking_link: /^https:\/\/www\.google\.com\/aclk\?sa=l&ai=/,
  });
  // 2020 desktop: data-pcu lists the redirector first ("http://clickserve.dartsearch.net/,https://www.pizzahut.com/");
  // that redirector used to be reported as the ad's link.
  t.match(adsOf('serp/bs-serp-parser-spider/desktop.html.gz')[0], {
    link: 'https://www.pizzahut.com/',
    tracking_link: /^https:\/\/www\.google\.com\/aclk\?/,
  });
  // 2023 page whose href is the relative /aclk tracker: the landing host comes from data-pcu.
  t.match(adsOf('serp/websearcher/2023-html_pages/1684959591.html.gz')[0], {
    link: 'https://www.heyjane.com/',
    tracking_link: /^https:\/\/www\.google\.com\/aclk\?sa=l/,
  });
});

t.test('ads › the mobile display URL is read', { skip: missing }, async (t) => {
  // 2023 mobile: "GoDaddy" and "https://www.godaddy.com" side by side, the URL in a role=text span.
  t.match(adsOf('serp/serp-parser-zlurad/mobile/_com-domains.html.gz')[0], {
    displayed_link: 'https://www.godaddy.com',
    link: 'https://www.godaddy.com/offers/domain?isc=GDD2dom',
  });
});

t.test('ads › no ad links to a click redirector', { skip: missing }, async (t) => {
  let seen = 0;
  for (const page of missing ? [] : listSerpPages()) {
    for (const ad of adsOf(page)) {
      seen++;
      const link = String(ad.link ?? '');
      if (/dartsearch\.net|xg4ken\.com|\/aclk\?|googleadservices/.test(link)) t.fail(`${page}: link ${link}`);
      if (ad.tracking_link !== undefined && !/\/aclk\?/.test(String(ad.tracking_link)))
        t.fail(`${page}: tracking_link ${ad.tracking_link}`);
    }
  }
  t.ok(seen >= 50, `checked ${seen} ads`);
});
