import { type HTMLElement as NhpElement, type Node as NhpNode, parse as nhpParse } from 'node-html-parser';
import type { HTMLElement, HTMLNode } from '../../parser/dom/index.js';

/**
 * The parser's own document tree must be the tree node-html-parser builds (the options the parser used before:
 * comments dropped, noscript/pre/textarea kept as text), less the bodies of script, style and svg: same elements
 * in the same places, same attribute values after decoding, same id, same text.
 */

const describe = (n: NhpNode | HTMLNode): string =>
  n.nodeType === 1 ? `<${(n as NhpElement).rawTagName}>` : `#text(${JSON.stringify(n.rawText.slice(0, 40))})`;

/** Elements whose bodies our tree leaves out (their children are not compared). */
const BODIES_LEFT_OUT = new Set(['script', 'style', 'svg']);

export const compareTrees = (ours: HTMLElement, theirs: NhpElement): string | undefined => {
  const stack: Array<[HTMLElement, NhpElement, string]> = [[ours, theirs, 'root']];
  let checked = 0;
  while (stack.length) {
    const [a, b, path] = stack.pop() as [HTMLElement, NhpElement, string];
    const ca = a.childNodes;
    const cb = BODIES_LEFT_OUT.has(b.rawTagName) ? [] : b.childNodes.filter((c) => c.nodeType !== 8);
    if (ca.length !== cb.length)
      return `${path}: ${ca.length} children, node-html-parser ${cb.length} (${ca.map(describe).join(' ')} / ${cb.map(describe).join(' ')})`.slice(
        0,
        600,
      );
    for (let i = 0; i < ca.length; i++) {
      const x = ca[i] as HTMLNode;
      const y = cb[i] as NhpNode;
      const where = `${path} > ${describe(x)}[${i}]`;
      if (x.nodeType !== y.nodeType) return `${where}: node type ${x.nodeType} vs ${y.nodeType}`;
      if (x.nodeType === 3) {
        if (x.rawText !== y.rawText) return `${where}: text differs`;
        if (x.text !== (y as NhpNode).text) return `${where}: decoded text differs`;
        continue;
      }
      const ye = y as NhpElement;
      if (x.rawTagName !== ye.rawTagName) return `${where}: tag ${x.rawTagName} vs ${ye.rawTagName}`;
      if (x.id !== ye.id) return `${where}: id ${x.id} vs ${ye.id}`;
      if ([...new Set(x.classes.filter(Boolean))].join(' ') !== ye.classList.value.filter(Boolean).join(' '))
        return `${where}: classes differ`;
      for (const name of Object.keys(ye.rawAttributes)) {
        if (x.getAttribute(name) !== ye.getAttribute(name)) return `${where}: attribute ${name} differs`;
      }
      if (Object.keys(x.rawAttributes).join() !== Object.keys(ye.rawAttributes).join())
        return `${where}: attribute names differ`;
      checked++;
      stack.push([x, ye, where.slice(-300)]);
    }
  }
  return checked >= 0 ? undefined : 'unreachable';
};

/**
 * node-html-parser as the parser used it (comments dropped; noscript, pre and textarea kept as text), with script
 * and style bodies kept as raw text too so that they do not turn into elements; `compareTrees` leaves the bodies of
 * script, style and svg out of the comparison, as our tree does.
 */
export const nhp = (html: string): NhpElement =>
  nhpParse(html, {
    comment: false,
    blockTextElements: { noscript: true, pre: true, textarea: true, script: true, style: true },
  });
