import t from 'tap';
import { compactResult, compactText } from '../../services/mcp/compact.js';

t.test(
  'compact view › filter chips are their names; a buying guide lists its topics with their summaries',
  async (t) => {
    const body = {
      organic_results: [{ position: 1, title: 'Best drawing tablets', link: 'https://example.com/tablets' }],
      serp_features: {
        filters: [
          { name: 'Images', link: 'https://www.google.com/search?q=x&udm=2&uds=ADvngMg', uds: 'ADvngMg', q: 'x' },
          {
            name: 'For beginners',
            link: 'https://www.google.com/search?q=x+for+beginners&uds=ABC',
            q: 'x for beginners',
          },
        ],
        buying_guide: {
          title: 'Buying guide',
          topics: [
            { topic: 'Screen size', summary: 'Bigger screens give more room to draw.' },
            { topic: 'Brands', options: [{ name: 'Wacom', price: '$79' }] },
          ],
        },
      },
    };
    const c = compactResult(body);
    t.same(c.features.filters, ['Images, For beginners'], 'names only: no Google tracking links');
    t.same(c.features.buying_guide, [
      'title: Buying guide',
      '- Screen size: Bigger screens give more room to draw.',
      '- Brands',
    ]);
    t.notMatch(compactText(c), /uds=/, 'no chip link reaches the text');
  },
);
