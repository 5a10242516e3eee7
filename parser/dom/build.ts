import { forgetPage, KEY, keyAttributes, splitClasses } from './attributes.js';
import { HTMLDocument } from './document.js';
import { append, HTMLElement, HTMLText } from './nodes.js';
import { repairUnclosed } from './repair.js';
import { CLOSED_BY_CLOSING, CLOSED_BY_OPENING, P_NOT_CLOSED_BY, tagInfo, VOID } from './rules.js';
import { createTokenizer, type Markup, newMarkup } from './tokenizer.js';

/**
 * The tree node-html-parser's `parse` builds with the options the parser used (comments dropped; noscript, pre and
 * textarea kept as text), less the bodies of `<script>`, `<style>` and `<svg>`. Google pages are mostly inline
 * scripts, styles and SVG icons; the builder jumps from such an opening tag to its closing tag in the page as it
 * is (no copy of the page is made), and the elements themselves stay, so nesting is unchanged.
 * test/parser/html.test.ts compares the two trees node by node on every fixture page.
 */
export const parseDocument = (html: string): HTMLDocument => {
  const b = createBuilder(html);
  const tokens = createTokenizer(html);
  const m = newMarkup();
  for (let pos = 0; tokens.next(pos, m); pos = m.end) b.token(m);
  return b.finish();
};

const NO_CLASSES: readonly string[] = [];
const NO_LISTS: readonly HTMLElement[][] = [];

/** `attr=value/` before a `/>`: node-html-parser reads the slash as part of the value, not as a self-closing tag. */
const kUnquotedAttributeValueAtEnd = /(?:^|\s)[^\s"'<>=/]+\s*=\s*[^\s"'<>`]+$/;

const createBuilder = (data: string) => {
  const root = new HTMLElement(null as unknown as string, '', '', NO_CLASSES);
  const doc = new HTMLDocument(root);
  root.doc = doc;
  doc.source = data;
  doc.inSourceOrder = doc.all;
  const stack: HTMLElement[] = [root];
  let current = root;
  // node-html-parser reads the page inside a frame element: text before the first tag and after the last one
  // belongs to the root.
  let lastTextPos = 0;
  // The same class lists recur hundreds of times on a page: one array (and one set of token strings) each, and
  // the byClass lists its elements go into.
  const classLists = new Map<string, { classes: readonly string[]; lists: HTMLElement[][] }>();
  // This document's byTag list for each tag name seen, by the name's TagInfo index.
  const tagLists: Array<HTMLElement[] | undefined> = [];

  const pop = () => {
    stack.pop();
    current = stack[stack.length - 1] as HTMLElement;
  };

  /** The byTag list of a tag name, kept per TagInfo index so that the map is asked once per name. */
  const tagListOf = (lower: string, index: number): HTMLElement[] | undefined => {
    if (index < 0) return undefined;
    let list = tagLists[index];
    if (!list) {
      list = doc.byTag.get(lower);
      if (!list) {
        list = [];
        doc.byTag.set(lower, list);
      }
      tagLists[index] = list;
    }
    return list;
  };

  /** Opens an element; true when the tag also closes it at once (void, or a raw-text body read to its end). */
  const open = (m: Markup, attrsFrom: number, movedSlash: string | undefined, closingSlash: string): boolean => {
    const tagName = m.tagName;
    const attrsLength = m.attributesLength;
    if (movedSlash === undefined) keyAttributes(data, attrsFrom, attrsFrom + attrsLength);
    else keyAttributes(movedSlash, 0, movedSlash.length);
    const id = KEY.id;
    const cls = KEY.cls;
    if (!closingSlash) {
      for (let closes = CLOSED_BY_OPENING.get(current.rawTagName); closes?.has(tagName); ) {
        pop();
        closes = CLOSED_BY_OPENING.get(current.rawTagName);
      }
    }
    let classes = NO_CLASSES;
    let lists = NO_LISTS;
    if (cls) {
      let known = classLists.get(cls);
      if (!known) {
        const split = splitClasses(cls);
        known = { classes: split, lists: doc.classLists(split) };
        classLists.set(cls, known);
      }
      classes = known.classes;
      lists = known.lists;
    }
    const info = tagInfo(tagName);
    const rawAttrs =
      movedSlash !== undefined
        ? movedSlash.slice(1)
        : attrsLength > 1
          ? data.slice(attrsFrom + 1, attrsFrom + attrsLength)
          : '';
    const el = new HTMLElement(tagName, rawAttrs, id, classes, info.lower);
    el.attrsStart = attrsFrom + 1;
    el.attrsEnd = attrsFrom + attrsLength;
    doc.addWith(el, lists, tagListOf(info.lower, info.index));
    append(current, el);
    current = el;
    stack.push(el);
    const tagEndPos = m.end;
    // A slash does not close a script or style (browsers and node-html-parser read on to the end tag); an SVG element
    // is foreign content, where it does.
    if (info.skipBody && (!closingSlash || info.lower !== 'svg')) {
      // The body runs to the closing tag, or (never closed) to the end of the page.
      const close = data.indexOf(`</${tagName}`, tagEndPos);
      lastTextPos = m.end = close < 0 ? data.length : close;
      doc.skipped.push(tagEndPos, m.end);
    }
    if (info.blockText) {
      const closeMarkup = `</${tagName}>`;
      const closeIndex = data.indexOf(closeMarkup, tagEndPos);
      const textEndPos = closeIndex === -1 ? data.length : closeIndex;
      const text = data.substring(tagEndPos, textEndPos);
      if (text.length > 0 && /\S/.test(text)) append(current, new HTMLText(text, null));
      if (closeIndex === -1) {
        lastTextPos = m.end = data.length + 1;
      } else {
        lastTextPos = m.end = closeIndex + closeMarkup.length;
        return true;
      }
    }
    return info.isVoid;
  };

  /** Closes `tagName` as node-html-parser does: the open element of that name, or what an end tag implies. */
  const close = (tagName: string) => {
    while (true) {
      if (current.rawTagName === tagName) {
        pop();
        return;
      }
      if (CLOSED_BY_CLOSING.get(current.tagName)?.has(tagName)) {
        pop();
        continue;
      }
      const openTag = current.rawTagName ? current.rawTagName.toLowerCase() : '';
      if (openTag === 'p' && stack.length > 1) {
        const closingTag = tagName.toLowerCase();
        const container = stack[stack.length - 2];
        if (
          container?.rawTagName &&
          container.rawTagName.toLowerCase() === closingTag &&
          !P_NOT_CLOSED_BY.has(closingTag)
        ) {
          pop();
          continue;
        }
      }
      return;
    }
  };

  return {
    token(m: Markup) {
      const leadingSlash = m.leadingSlash;
      const tagName = m.tagName;
      let closingSlash = m.closingSlash;
      const tagStartPos = m.start;
      // The attribute text lies in the page right after the tag name; it is only copied out where a slash moves in.
      const attrsFrom = tagStartPos + 1 + leadingSlash.length + tagName.length;
      let movedSlash: string | undefined;
      if (closingSlash && !leadingSlash && !VOID.has(tagName)) {
        const written = data.slice(attrsFrom, attrsFrom + m.attributesLength);
        if (kUnquotedAttributeValueAtEnd.test(written)) {
          movedSlash = written + closingSlash;
          closingSlash = '';
        }
      }
      if (lastTextPos < tagStartPos) append(current, new HTMLText(data.substring(lastTextPos, tagStartPos), null));
      lastTextPos = m.end;
      if (m.comment) {
        doc.skipped.push(tagStartPos, m.end);
        return;
      }
      // node-html-parser's frame element: ignored when a page writes it too, as there.
      if (tagName === 'documentfragmentcontainer') return;
      const closed = !leadingSlash && open(m, attrsFrom, movedSlash, closingSlash);
      if (leadingSlash || closingSlash || closed) close(tagName);
    },
    finish(): HTMLDocument {
      // Where the frame would close: trailing text belongs to whatever is still open.
      if (lastTextPos < data.length) append(current, new HTMLText(data.substring(lastTextPos), null));
      repairUnclosed(doc, stack);
      doc.closeRanges();
      forgetPage();
      return doc;
    },
  };
};
