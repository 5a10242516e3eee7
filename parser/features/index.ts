import type { HTMLElement } from '../html.js';
import { ads } from './ads.js';
import { answerBox } from './answerBox.js';
import { headedBlocks, shoppingResults } from './blocks.js';
import { buyingGuide } from './buyingGuide.js';
import { filters } from './filters.js';
import { knowledgeGraphs } from './knowledge.js';
import { localResults } from './local.js';
import { immersiveProducts } from './products.js';
import { relatedQuestions } from './questions.js';
import { pagination, relatedSearches } from './relatedSearches.js';

/**
 * Every SERP feature found on the page, each under its SerpApi name and present only when found (docs/api.md#outputs).
 * A block SerpApi documents no name for has one of ours, said where it is read (`other_knowledge_graphs`,
 * `buying_guide`).
 */
export const parseFeatures = (root: HTMLElement): Record<string, unknown> => {
  const features: Record<string, unknown> = {};
  const set = (name: string, value: unknown) => {
    if (value !== undefined) features[name] = value;
  };
  set('answer_box', answerBox(root));
  const [knowledgeGraph, ...otherPanels] = knowledgeGraphs(root);
  set('knowledge_graph', knowledgeGraph);
  set('other_knowledge_graphs', otherPanels.length ? otherPanels : undefined);
  set('related_questions', relatedQuestions(root));
  set('local_results', localResults(root));
  set('ads', ads(root));
  set('shopping_results', shoppingResults(root));
  set('immersive_products', immersiveProducts(root));
  for (const [name, items] of Object.entries(headedBlocks(root))) set(name, items);
  set('buying_guide', buyingGuide(root));
  set('related_searches', relatedSearches(root));
  set('filters', filters(root));
  set('pagination', pagination(root));
  return features;
};
