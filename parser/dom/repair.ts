import { append, dropChildren, type HTMLDocument, type HTMLElement, type HTMLNode } from './nodes.js';

/**
 * Elements still open when the page ends, repaired as node-html-parser repairs them: their children move up to the
 * enclosing element. node-html-parser moves an unclosed element's children up one level per enclosing unclosed
 * element, so the children of the innermost move once per level: n nested unclosed tags cost ~n²/2 moves (249,000 of
 * them, under the crawler's tag limit, held a parse thread for minutes). The same moves are made here once: what
 * would have been appended to the element now on top of the stack waits in `carried` (one list per element it came
 * from, innermost last) until an element keeps it, and is appended there in the order node-html-parser leaves it.
 */
export const repairUnclosed = (doc: HTMLDocument, stack: HTMLElement[]): void => {
  if (stack.length <= 1) return;
  const carried: HTMLNode[][] = [];
  const settle = (keeper: HTMLElement) => {
    for (let i = carried.length - 1; i >= 0; i--) for (const child of carried[i] as HTMLNode[]) append(keeper, child);
    carried.length = 0;
  };
  while (stack.length > 1) {
    const last = stack.pop() as HTMLElement;
    const oneBefore = stack[stack.length - 1] as HTMLElement;
    if (!last.parentNode?.parentNode) {
      settle(last);
      continue;
    }
    removeChild(oneBefore, last);
    carried.push(last.childNodes);
    dropChildren(last);
    if (last.parentNode === oneBefore && last.tagName === oneBefore.tagName) {
      // a same-tag pair: the children go to the pair's parent, and the outer one is closed where it stands
      stack.pop();
      const keeper = oneBefore.parentNode as HTMLElement;
      if (keeper !== stack[stack.length - 1]) settle(keeper);
    }
  }
  settle(stack[0] as HTMLElement);
  // Moving children can change document order, so the index is rebuilt from the repaired tree.
  reindex(doc);
};

/** document order, walked with a stack of its own: a page can nest deeper than the call stack goes */
const reindex = (doc: HTMLDocument): void => {
  doc.inSourceOrder = [...doc.all];
  doc.clear();
  const pending: HTMLNode[] = [...doc.root.childNodes].reverse();
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    if (node.nodeType !== 1) continue;
    const el = node as HTMLElement;
    doc.add(el);
    for (let i = el.childNodes.length - 1; i >= 0; i--) pending.push(el.childNodes[i] as HTMLNode);
  }
};

/** an open element is its parent's last child when the page ends: taken off the end, without a scan */
const removeChild = (parent: HTMLElement, child: HTMLElement): void => {
  const children = parent.childNodes;
  if (children[children.length - 1] === child) children.pop();
  else parent.childNodes = children.filter((c) => c !== child);
};
