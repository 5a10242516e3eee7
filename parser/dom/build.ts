import { forgetPage, KEY, keyAttributes, splitClasses } from './attributes.js';
import { append, HTMLDocument, HTMLElement, HTMLText } from './nodes.js';
import { repairUnclosed } from './repair.js';
import { CLOSED_BY_CLOSING, CLOSED_BY_OPENING, P_NOT_CLOSED_BY, tagInfo, VOID } from './rules.js';
import { newMarkup, nextToken, tokenizerFor } from './tokenizer.js';

const NO_CLASSES: readonly string[] = [];
const NO_LISTS: readonly HTMLElement[][] = [];

/** `attr=value/` before a `/>`: node-html-parser reads the slash as part of the value, not as a self-closing tag. */
const kUnquotedAttributeValueAtEnd = /(?:^|\s)[^\s"'<>=/]+\s*=\s*[^\s"'<>`]+$/;

/**
 * The tree node-html-parser's `parse` builds with the options the parser used (comments dropped; noscript, pre and
 * textarea kept as text), less the bodies of `<script>`, `<style>` and `<svg>`. Google pages are mostly inline
 * scripts, styles and SVG icons; the builder jumps from such an opening tag to its closing tag in the page as it
 * is (no copy of the page is made), and the elements themselves stay, so nesting is unchanged.
 * test/parser/html.test.ts compares the two trees node by node on every fixture page. The loop over the tokens is
 * one function on purpose: it runs once per tag of every page, and its state in locals is a fifth of the build's time
 * faster than the same state shared with helper closures.
 */
export const parseDocument = (data: string): HTMLDocument => {
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
  const page = tokenizerFor(data);
  const m = newMarkup();
  const classes = createClassLists(doc);
  // This document's byTag list for each tag name seen, by the name's TagInfo index.
  const tagLists: Array<HTMLElement[] | undefined> = [];
  for (let pos = 0; nextToken(page, pos, m); pos = m.end) {
    let leadingSlash = m.leadingSlash;
    const tagName = m.tagName;
    let closingSlash = m.closingSlash;
    const tagEndPos = m.end;
    const tagStartPos = m.start;
    // The attribute text lies in the page right after the tag name; it is only copied out where a slash moves in.
    const attrsFrom = tagStartPos + 1 + leadingSlash.length + tagName.length;
    const attrsLength = m.attributesLength;
    let movedSlash: string | undefined;
    if (closingSlash && !leadingSlash && !VOID.has(tagName)) {
      const written = data.slice(attrsFrom, attrsFrom + attrsLength);
      if (kUnquotedAttributeValueAtEnd.test(written)) {
        movedSlash = written + closingSlash;
        closingSlash = '';
      }
    }
    if (lastTextPos < tagStartPos) append(current, new HTMLText(data.substring(lastTextPos, tagStartPos), null));
    lastTextPos = tagEndPos;
    if (m.comment) {
      doc.skipped.push(tagStartPos, tagEndPos);
      continue;
    }
    // node-html-parser's frame element: ignored when a page writes it too, as there.
    if (tagName === 'documentfragmentcontainer') continue;
    let isVoid = false;
    if (!leadingSlash) {
      if (movedSlash === undefined) keyAttributes(data, attrsFrom, attrsFrom + attrsLength);
      else keyAttributes(movedSlash, 0, movedSlash.length);
      if (!closingSlash) {
        for (let closes = CLOSED_BY_OPENING.get(current.rawTagName); closes?.has(tagName); ) {
          stack.pop();
          current = stack[stack.length - 1] as HTMLElement;
          closes = CLOSED_BY_OPENING.get(current.rawTagName);
        }
      }
      const known = classes.of(KEY.cls);
      const info = tagInfo(tagName);
      const rawAttrs =
        movedSlash !== undefined
          ? movedSlash.slice(1)
          : attrsLength > 1
            ? data.slice(attrsFrom + 1, attrsFrom + attrsLength)
            : '';
      const el = new HTMLElement(tagName, rawAttrs, KEY.id, known.classes, info.lower);
      el.attrsStart = attrsFrom + 1;
      el.attrsEnd = attrsFrom + attrsLength;
      let tagList = info.index >= 0 ? tagLists[info.index] : undefined;
      if (!tagList && info.index >= 0) {
        tagList = doc.byTag.get(info.lower);
        if (!tagList) {
          tagList = [];
          doc.byTag.set(info.lower, tagList);
        }
        tagLists[info.index] = tagList;
      }
      doc.addWith(el, known.lists, tagList);
      append(current, el);
      current = el;
      stack.push(el);
      isVoid = info.isVoid;
      // A slash does not close a script or style (browsers and node-html-parser read on to the end tag); an SVG
      // element is foreign content, where it does.
      if (info.skipBody && (!closingSlash || info.lower !== 'svg')) {
        // The body runs to the closing tag, or (never closed) to the end of the page.
        const endTag = data.indexOf(`</${tagName}`, tagEndPos);
        lastTextPos = m.end = endTag < 0 ? data.length : endTag;
        doc.skipped.push(tagEndPos, m.end);
      }
      if (info.blockText) {
        lastTextPos = m.end = rawTextBody(data, tagName, tagEndPos, el);
        if (m.end <= data.length) leadingSlash = '/';
      }
    }
    if (leadingSlash || closingSlash || isVoid) current = closeElement(stack, tagName);
  }
  // Where the frame would close: trailing text belongs to whatever is still open.
  if (lastTextPos < data.length) append(current, new HTMLText(data.substring(lastTextPos), null));
  repairUnclosed(doc, stack);
  doc.closeRanges();
  forgetPage();
  return doc;
};

/**
 * The same class lists recur hundreds of times on a page: one array (and one set of token strings) each, and the
 * byClass lists its elements go into.
 */
const createClassLists = (doc: HTMLDocument) => {
  const known = new Map<string, { classes: readonly string[]; lists: HTMLElement[][] }>();
  const none = { classes: NO_CLASSES, lists: NO_LISTS as HTMLElement[][] };
  return {
    of(cls: string) {
      if (!cls) return none;
      let entry = known.get(cls);
      if (!entry) {
        const split = splitClasses(cls);
        entry = { classes: split, lists: doc.classLists(split) };
        known.set(cls, entry);
      }
      return entry;
    },
  };
};

/**
 * A noscript, pre or textarea body, kept as one text node of `el`: to its end tag, or (never closed) to the end of
 * the page. Returns where the tokens go on: past the end tag, or past the end of the page when there is none.
 */
const rawTextBody = (data: string, tagName: string, from: number, el: HTMLElement): number => {
  const closeMarkup = `</${tagName}>`;
  const closeIndex = data.indexOf(closeMarkup, from);
  const text = data.substring(from, closeIndex === -1 ? data.length : closeIndex);
  if (text.length > 0 && /\S/.test(text)) append(el, new HTMLText(text, null));
  return closeIndex === -1 ? data.length + 1 : closeIndex + closeMarkup.length;
};

/**
 * An end tag (or a void or self-closed element), as node-html-parser closes: the open element of that name, and
 * the elements its closing implies. Returns the element left open.
 */
const closeElement = (stack: HTMLElement[], tagName: string): HTMLElement => {
  let current = stack[stack.length - 1] as HTMLElement;
  while (true) {
    if (current.rawTagName === tagName) {
      stack.pop();
      return stack[stack.length - 1] as HTMLElement;
    }
    if (CLOSED_BY_CLOSING.get(current.tagName)?.has(tagName)) {
      stack.pop();
      current = stack[stack.length - 1] as HTMLElement;
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
        stack.pop();
        current = stack[stack.length - 1] as HTMLElement;
        continue;
      }
    }
    return current;
  }
};
