/**
 * A drop's document as Markdown, for the readable copy (docs/api.md, "Readable copy (Markdown)"): turndown with its
 * own rules for GitHub-flavoured tables and strikethrough, and without anything that is not text to read (scripts,
 * styles, templates, frames, SVG and canvas content, form controls). Runs inside the converter's worker thread
 * (markdown-worker.ts), never on the event loop: turndown parses the whole document into a DOM first, and some
 * shapes of HTML (very deep nesting) cost it far more than their size (docs/decisions/0025-markdown-copy.md).
 */
import TurndownService from 'turndown';

/** The DOM members the rules read (turndown hands them its own DOM's nodes; the project compiles without DOM types). */
interface DomElement {
  readonly nodeName: string;
  readonly childNodes: ArrayLike<DomElement>;
  readonly previousElementSibling: DomElement | null;
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

/** The most columns a cell's colspan adds (a hostile `colspan=100000` must not blow up a row). */
const MAX_COLSPAN = 100;

/** One table cell as GFM: on one line, pipes escaped, `| ` before the row's first cell, ` |` after each. */
function tableCell(content: string, node: DomElement): string {
  const text = content.replace(/\s+/g, ' ').trim().replace(/\|/g, '\\|');
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
  return `\n\n${caption === '' ? '' : `${caption}\n\n`}${[paddedHeader, delimiter, ...body].join('\n')}\n\n`;
}

const isDataUrl = (value: string | null) => value !== null && /^\s*data:/i.test(value);
const isScriptUrl = (value: string | null) => value !== null && /^\s*javascript:/i.test(value);

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
  // An inline image (often hundreds of kilobytes of base64) is not worth reading: its alternative text is.
  service.addRule('dataImage', {
    filter: (node) => node.nodeName === 'IMG' && isDataUrl(asElement(node).getAttribute('src')),
    replacement: (_content, node) => service.escape(asElement(node).getAttribute('alt') ?? ''),
  });
  // A `javascript:` link goes nowhere for a reader: its text stays, the link does not.
  service.addRule('scriptLink', {
    filter: (node) => node.nodeName === 'A' && isScriptUrl(asElement(node).getAttribute('href')),
    replacement: (content) => content,
  });
  return (html) => service.turndown(html);
}
