import { textOf, unwrapLink } from '../dom.js';
import type { HTMLElement } from '../html.js';
import { qs, qsa } from '../select.js';

/**
 * People also ask: `div.related-question-pair` from 2020 to 2026. The question is in `data-q` where Google sets
 * it (2023–26); otherwise the first heading-like text. The answer is only in the page when Google pre-expands it.
 */
export const relatedQuestions = (root: HTMLElement): Array<Record<string, string>> | undefined => {
  const out: Array<Record<string, string>> = [];
  const seen = new Set<string>();
  for (const pair of qsa(root, '.related-question-pair')) {
    const question =
      pair.getAttribute('data-q') ??
      (textOf(qs(pair, '[role="heading"]')) ||
        textOf(qs(pair, '.CSkcDe')) ||
        textOf(qs(pair, '[role="button"]')) ||
        textOf(qs(pair, 'span')));
    if (!question || seen.has(question)) continue;
    seen.add(question);
    const q: Record<string, string> = { question };
    const answer = qs(pair, '.hgKElc') ?? qs(pair, '[data-attrid="wa:/description"]') ?? qs(pair, '.VwiC3b');
    if (answer && textOf(answer)) q.snippet = textOf(answer);
    const a = qs(pair, '.yuRUbf a') ?? qs(pair, 'a[href] h3')?.parentNode;
    const link = unwrapLink(a?.getAttribute('href'));
    if (link && /^https?:/.test(link)) {
      q.link = link;
      const title = textOf(qs(a, 'h3'));
      if (title) q.title = title;
      const cite = textOf(qs(pair, 'cite'));
      if (cite) q.displayed_link = cite;
    }
    out.push(q);
  }
  return out.length ? out : undefined;
};
