import type { HTMLElement } from 'node-html-parser';
import { textOf, unwrapLink } from '../dom.js';

/**
 * People also ask: `div.related-question-pair` from 2020 to 2026. The question is in `data-q` where Google sets
 * it (2023–26); otherwise the first heading-like text. The answer is only in the page when Google pre-expands it.
 */
export const relatedQuestions = (root: HTMLElement): Array<Record<string, string>> | undefined => {
  const out: Array<Record<string, string>> = [];
  const seen = new Set<string>();
  for (const pair of root.querySelectorAll('.related-question-pair')) {
    const question =
      pair.getAttribute('data-q') ??
      (textOf(pair.querySelector('[role="heading"]')) ||
        textOf(pair.querySelector('.CSkcDe')) ||
        textOf(pair.querySelector('[role="button"]')) ||
        textOf(pair.querySelector('span')));
    if (!question || seen.has(question)) continue;
    seen.add(question);
    const q: Record<string, string> = { question };
    const answer =
      pair.querySelector('.hgKElc') ??
      pair.querySelector('[data-attrid="wa:/description"]') ??
      pair.querySelector('.VwiC3b');
    if (answer && textOf(answer)) q.snippet = textOf(answer);
    const a = pair.querySelector('.yuRUbf a') ?? pair.querySelector('a[href] h3')?.parentNode;
    const link = unwrapLink(a?.getAttribute('href'));
    if (link && /^https?:/.test(link)) {
      q.link = link;
      const title = textOf(a?.querySelector('h3'));
      if (title) q.title = title;
      const cite = textOf(pair.querySelector('cite'));
      if (cite) q.displayed_link = cite;
    }
    out.push(q);
  }
  return out.length ? out : undefined;
};
