/**
 * A drop's document as Markdown, for the readable copy (docs/api.md, "Readable copy (Markdown)"): turndown with its
 * own rules for GitHub-flavoured tables and strikethrough, and without anything that is not text to read (scripts,
 * styles, templates, frames, SVG and canvas content, form controls). Runs inside the converter's worker thread
 * (markdown-worker.ts), never on the event loop: turndown parses the whole document into a DOM first, and some
 * shapes of HTML (very deep nesting) cost it far more than their size (docs/decisions/0025-markdown-copy.md).
 *
 * The Markdown is neutralised (docs/decisions/0031-markdown-copy-bounded-and-neutralised.md): text renders as the
 * same text and never as HTML (`<`, `|` and reference-like `&` escaped besides turndown's own escaping), code spans
 * and fences are longer than any backtick run inside them, and link and image targets are kept only with a safe
 * scheme (domain/markdown-text.ts), percent-encoded so that every link parses.
 */
import TurndownService from 'turndown';
import {
  escapeHtmlSignificant,
  escapeMarkdownText,
  markdownLinkTarget,
  markdownLinkTitle,
} from '../domain/markdown-text.js';

/** The DOM members the rules read (turndown hands them its own DOM's nodes; the project compiles without DOM types). */
interface DomElement {
  readonly nodeName: string;
  readonly nodeType: number;
  readonly nodeValue: string | null;
  readonly childNodes: ArrayLike<DomElement>;
  readonly previousElementSibling: DomElement | null;
  readonly parentNode: DomElement | null;
  readonly textContent: string | null;
  getAttribute(name: string): string | null;
}

const asElement = (node: unknown) => node as DomElement;

/** Elements whose content is not text a reader sees: dropped with everything inside them. */
const DROPPED = [
  'script',
  'style',
  'template',
  'noscript',
  'iframe',
  'frame',
  'frameset',
  'object',
  'embed',
  'svg',
  'canvas',
  'audio',
  'video',
  'head',
  'title',
  'meta',
  'link',
  'base',
  'select',
  'datalist',
  'input',
  'textarea',
  'button',
] as const;

const DROPPED_NAMES: ReadonlySet<string> = new Set(DROPPED.map((name) => name.toUpperCase()));

/** The text a reader sees in `root`: its text nodes, a line break for `<br>`, without the dropped elements. */
function visibleText(root: DomElement): string {
  const parts: string[] = [];
  const stack: DomElement[] = [root];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    if (node.nodeType === 3) parts.push(node.nodeValue ?? '');
    else if (node.nodeName === 'BR') parts.push('\n');
    else if (node === root || !DROPPED_NAMES.has(node.nodeName)) {
      const children = node.childNodes;
      for (let i = children.length - 1; i >= 0; i--) stack.push(children[i] as DomElement);
    }
  }
  return parts.join('');
}

/** The most columns a cell's colspan adds (a hostile `colspan=100000` must not blow up a row). */
const MAX_COLSPAN = 100;

/**
 * One table cell as GFM: on one line, pipes escaped, `| ` before the row's first cell, ` |` after each. Every pipe
 * gets a backslash right before it (text pipes already have one): GFM splits a row at any other pipe before it
 * reads code spans, so a pipe inside a code span would otherwise end the cell, and the code with it.
 */
function tableCell(content: string, node: DomElement): string {
  const text = content
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/(?<!\\)\|/g, '\\|');
  const span = Math.min(Math.max(Number.parseInt(node.getAttribute('colspan') ?? '1', 10) || 1, 1), MAX_COLSPAN);
  const first = node.previousElementSibling === null;
  return `${first ? '|' : ''} ${text} |${'  |'.repeat(span - 1)}`;
}

/** Cells in a row as tableCell writes it: each ends with ` |`, and any `|` inside a cell is escaped (`\|`). */
const countCells = (row: string) => row.split(' |').length - 1;

/** The caption among a table's own children (not a nested table's), as text on one line. */
function captionOf(table: DomElement): string {
  const children = table.childNodes;
  for (let i = 0; i < children.length; i++) {
    const child = children[i];
    if (child?.nodeName === 'CAPTION') return (child.textContent ?? '').replace(/\s+/g, ' ').trim();
  }
  return '';
}

/**
 * A whole table: its rows, one per line, with the delimiter row after the first (GFM tables have exactly one header
 * row; a table without `<th>` gets its first row as header, which reads better than raw HTML). The header is padded
 * to the widest row, so no cell is cut off. Linear in the table's size.
 */
function table(content: string, node: DomElement): string {
  const rows = content.split('\n').filter((line) => line.startsWith('|'));
  const [header, ...body] = rows;
  if (header === undefined) return '\n\n';
  let columns = 0;
  for (const row of rows) columns = Math.max(columns, countCells(row));
  const paddedHeader = header + '  |'.repeat(columns - countCells(header));
  const delimiter = `|${' --- |'.repeat(columns)}`;
  const caption = captionOf(node);
  const captionLine = caption === '' ? '' : `${escapeMarkdownText(caption)}\n\n`;
  return `\n\n${captionLine}${[paddedHeader, delimiter, ...body].join('\n')}\n\n`;
}

/** A run of backticks longer than any in `code` (at least `min`): a code span or fence `code` cannot end. */
function backtickFence(code: string, min: number): string {
  let longest = 0;
  for (const run of code.match(/`+/g) ?? []) longest = Math.max(longest, run.length);
  return '`'.repeat(Math.max(min, longest + 1));
}

/** A fence's info string: a language name only (a backtick or a space in it would make the fence no fence). */
function languageOf(node: DomElement | null): string {
  const language = /(?:^|\s)lang(?:uage)?-([^\s]+)/.exec(node?.getAttribute('class') ?? '')?.[1] ?? '';
  return /^[A-Za-z0-9_+.#-]{1,40}$/.test(language) ? language : '';
}

/**
 * Elements whose Markdown keeps the line starts of a block inside them (turndown's block rule, list items, quotes).
 * A fence must start a line: inside anything else (a heading, a link, emphasis, a table cell) it would not be one,
 * and its content would be read as Markdown, raw HTML included.
 */
const BLOCK_CONTAINERS: ReadonlySet<string> = new Set(
  (
    'BODY HTML DIV SECTION ARTICLE MAIN ASIDE HEADER FOOTER NAV ADDRESS HGROUP SEARCH DIALOG FORM FIELDSET CENTER ' +
    'FIGURE FIGCAPTION DETAILS BLOCKQUOTE UL OL LI DL DT DD PRE X-TURNDOWN #document #document-fragment'
  ).split(' '),
);

function startsLines(node: DomElement): boolean {
  for (let parent = node.parentNode; parent !== null; parent = parent.parentNode) {
    if (!BLOCK_CONTAINERS.has(parent.nodeName)) return false;
  }
  return true;
}

/**
 * A `<pre>` as a fenced code block, whether or not its content is a `<code>`: its text as written, inside a fence
 * longer than any backtick run in it, so no line of it can close the fence (turndown's own fence only looks at runs
 * that start a line). Where a fence would not start a line, an inline code span on one line, delimited the same way.
 */
function preformatted(node: DomElement): string {
  const children = node.childNodes;
  const only = children.length === 1 ? children[0] : undefined;
  const code = only?.nodeName === 'CODE' ? only : undefined;
  const text = visibleText(node).replace(/\n$/, '');
  if (!startsLines(node)) return inlineCode(text);
  const fence = backtickFence(text, 3);
  return `\n\n${fence}${languageOf(code ?? node)}\n${text}\n${fence}\n\n`;
}

/**
 * Marks around each inline code span while the document converts (private-use characters, taken out of the document
 * first): two spans side by side would merge their backtick runs, and neither would end where it should.
 */
const SPAN_OPEN = '\ue000';
const SPAN_CLOSE = '\ue001';
const SPAN_MARKS = /[\ue000\ue001]/g;

/**
 * Inline code: on one line, between backtick runs longer than any inside it (turndown's rule, kept in one place),
 * marked so that `separateCodeSpans` can keep it apart from a neighbouring span.
 */
function inlineCode(content: string): string {
  const code = content.replace(SPAN_MARKS, '').replace(/\r?\n|\r/g, ' ');
  if (code === '') return '';
  const pad = /^`|^ .*?[^ ].* $|`$/.test(code) ? ' ' : '';
  const fence = backtickFence(code, 1);
  return `${SPAN_OPEN}${fence}${pad}${code}${pad}${fence}${SPAN_CLOSE}`;
}

/** A space between code spans that touch, then the marks out. */
const separateCodeSpans = (markdown: string) =>
  markdown.replaceAll(`${SPAN_CLOSE}${SPAN_OPEN}`, ' ').replace(SPAN_MARKS, '');

/** A link whose target a reader may follow; otherwise its text alone (docs/api.md, "Readable copy (Markdown)"). */
function link(content: string, node: DomElement): string {
  const target = markdownLinkTarget(node.getAttribute('href') ?? '');
  if (target === undefined || content.trim() === '') return content;
  return `[${content}](${target}${markdownLinkTitle(node.getAttribute('title'))})`;
}

/**
 * An image with a safe, non-inline target; otherwise its alternative text. An inline `data:` image (often hundreds
 * of kilobytes of base64, or an SVG with script) is not worth reading: its alternative text is.
 */
function image(node: DomElement, escapeText: (text: string) => string): string {
  const alt = escapeText((node.getAttribute('alt') ?? '').replace(/\s+/g, ' ').trim());
  const src = (node.getAttribute('src') ?? '').trim();
  const inline = /^data:/i.test(src.replace(/[\p{Cc}\p{Cf}\p{Z}\s]/gu, ''));
  const target = inline ? undefined : markdownLinkTarget(src);
  if (target === undefined) return alt;
  return `![${alt}](${target}${markdownLinkTitle(node.getAttribute('title'))})`;
}

/** A converter with the readable copy's rules; reuse it (building one costs more than a small document). */
export function createHtmlToMarkdown(): (html: string) => string {
  const service = new TurndownService({
    headingStyle: 'atx',
    codeBlockStyle: 'fenced',
    bulletListMarker: '-',
    emDelimiter: '_',
    strongDelimiter: '**',
    hr: '---',
  });
  const ownEscape = TurndownService.prototype.escape;
  // Turndown escapes Markdown's punctuation; `<`, `|` and `&` would still be read as HTML, a cell or a reference.
  const escapeText = (text: string) => escapeHtmlSignificant(ownEscape.call(service, text));
  service.escape = escapeText;
  service.remove([...DROPPED]);
  service.addRule('tableSection', { filter: ['thead', 'tbody', 'tfoot'], replacement: (content) => content });
  service.addRule('tableCaption', { filter: ['caption'], replacement: () => '' });
  service.addRule('tableCell', {
    filter: ['th', 'td'],
    replacement: (content, node) => tableCell(content, asElement(node)),
  });
  service.addRule('tableRow', {
    filter: ['tr'],
    replacement: (content) => (content.trim() === '' ? '' : `\n${content.trim()}\n`),
  });
  service.addRule('table', { filter: ['table'], replacement: (content, node) => table(content, asElement(node)) });
  service.addRule('strikethrough', { filter: ['del', 's'], replacement: (content) => `~~${content}~~` });
  service.addRule('preformatted', { filter: ['pre'], replacement: (_content, node) => preformatted(asElement(node)) });
  service.addRule('inlineCode', {
    filter: (node) => node.nodeName === 'CODE' && node.parentNode?.nodeName !== 'PRE',
    replacement: inlineCode,
  });
  service.addRule('link', {
    filter: (node) => node.nodeName === 'A' && (asElement(node).getAttribute('href') ?? '') !== '',
    replacement: (content, node) => link(content, asElement(node)),
  });
  service.addRule('image', { filter: ['img'], replacement: (_content, node) => image(asElement(node), escapeText) });
  return (html) => separateCodeSpans(service.turndown(html.replace(SPAN_MARKS, '\ufffd')));
}
