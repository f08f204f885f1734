/**
 * The readable copy's Markdown as a reader gets it (docs/decisions/0031-markdown-copy-bounded-and-neutralised.md):
 * rendered by a real CommonMark renderer, markdown-it, configured as the most permissive chat UI would be (raw HTML
 * passed through, every link target kept, bare URLs linkified), and checked: no raw HTML reaches the page (no HTML
 * token, only the tags and attributes Markdown itself makes), and no link or image target has a scheme other than
 * http, https or mailto once read as a browser would. Independent of the code under test.
 */
import MarkdownIt from 'markdown-it';

const renderer = new MarkdownIt({ html: true, linkify: true });
renderer.validateLink = () => true;
type Token = ReturnType<typeof renderer.parse>[number];

/** The elements a Markdown renderer makes of Markdown itself. */
const MARKDOWN_TAGS = new Set(
  'p h1 h2 h3 h4 h5 h6 a img code pre em strong s ul ol li blockquote hr br table thead tbody tr th td'.split(' '),
);
const MARKDOWN_ATTRIBUTES = new Set(['href', 'src', 'alt', 'title', 'class', 'style', 'start']);

/** Independent of the code under test: decoded the way a renderer and then a browser would, several times over. */
function followable(target: string): boolean {
  let value = target;
  for (let round = 0; round < 4; round++) {
    value = renderer.utils.unescapeAll(value);
    value = value.replace(/%([0-9a-f]{2})/gi, (_m, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
  }
  const squeezed = value.replace(/[\p{Cc}\p{Cf}\p{Zs}\u2028\u2029]/gu, '');
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(squeezed)?.[1]?.toLowerCase();
  return scheme === undefined || scheme === 'http' || scheme === 'https' || scheme === 'mailto';
}

/**
 * `markdown` with its code spans cut out and its backslash escapes made plain text, read left to right as CommonMark
 * does: outside code a backslash escapes the next punctuation (so `\`` is no delimiter); a run of backticks opens a
 * span only where a run of the same length closes it; inside a span backslashes are literal.
 */
function withoutCodeSpans(markdown: string): string {
  let out = '';
  let i = 0;
  while (i < markdown.length) {
    const char = markdown[i];
    if (char === '\\' && i + 1 < markdown.length && /[!-/:-@[-`{-~]/.test(markdown[i + 1] as string)) {
      out += '..';
      i += 2;
    } else if (char === '`') {
      let run = 1;
      while (markdown[i + run] === '`') run++;
      const fence = '`'.repeat(run);
      let close = markdown.indexOf(fence, i + run);
      while (close !== -1 && markdown[close + run] === '`') {
        let end = close;
        while (markdown[end] === '`') end++;
        close = markdown.indexOf(fence, end);
      }
      if (close === -1) {
        out += fence;
        i += run;
      } else i = close + run;
    } else {
      out += char;
      i++;
    }
  }
  return out;
}

/** What a renderer would do wrong with `markdown`: [] when nothing. */
export function renderingProblems(markdown: string): string[] {
  const problems: string[] = [];
  const stack: Token[] = renderer.parse(markdown, {});
  for (let token = stack.pop(); token !== undefined; token = stack.pop()) {
    if (token.type === 'html_block' || token.type === 'html_inline') problems.push(`raw HTML ${token.content}`);
    for (const name of ['href', 'src']) {
      const target = token.attrGet(name);
      if (target !== null && !followable(String(target))) problems.push(`${name} ${target}`);
    }
    for (const child of token.children ?? []) stack.push(child);
  }
  const html = renderer.render(markdown);
  for (const [, name = '', attributes = ''] of html.matchAll(/<\/?([A-Za-z][\w-]*)([^>]*)>/g)) {
    if (!MARKDOWN_TAGS.has(name.toLowerCase())) problems.push(`tag <${name}>`);
    for (const [, attribute = ''] of attributes.matchAll(/\s([^\s=/>]+)(?:="[^"]*")?/g)) {
      if (!MARKDOWN_ATTRIBUTES.has(attribute.toLowerCase())) problems.push(`attribute ${attribute} on <${name}>`);
    }
  }
  // The Markdown text itself, code left out: no dangerous scheme right after an unescaped `](`.
  const destination = /(?:^|[^\\])\]\(\s*<?\s*(?:javascript|vbscript|data|file):/i;
  const outsideCode = withoutCodeSpans(markdown);
  if (destination.test(outsideCode)) problems.push('dangerous destination');
  return problems;
}

/** The text a reader sees when `markdown` is rendered. */
export function shownText(markdown: string): string {
  return renderer.utils.unescapeAll(renderer.render(markdown).replace(/<[^>]*>/g, ''));
}
