/**
 * The readable copy's Markdown as a CommonMark renderer reads it (docs/decisions/0031-markdown-copy-bounded-and-
 * neutralised.md), with markdown-it: a version's context (the agent's own Markdown) rendered and converted back
 * through the document's converter, so its raw HTML becomes text and its links keep only safe targets; and the last
 * check of every piece of Markdown the copy is made of, which must hold no raw HTML and no unsafe target. Runs in
 * the converter's worker (markdown-worker.ts) only.
 */
import MarkdownIt from 'markdown-it';
import { escapeMarkdownText, isSafeLinkTarget } from '../domain/markdown-text.js';

/**
 * What a renderer is given: raw HTML passed through, bare URLs linkified and every link kept, so the check sees what
 * the worst would. Emphasis and strikethrough are left out: they make no HTML and no link, and cost a fifth of a
 * parse.
 */
const permissive = new MarkdownIt({ html: true, linkify: true });
permissive.validateLink = () => true;
permissive.disable(['emphasis', 'strikethrough']);

/** The context's reader: raw HTML as text, line breaks kept, every link kept (the converter decides on targets). */
const contextReader = new MarkdownIt({ html: false, linkify: false, breaks: true });
contextReader.validateLink = () => true;

type Token = ReturnType<typeof permissive.parse>[number];

/**
 * The first reason `markdown` is unsafe to render (raw HTML, or an unsafe link or image target), if any. Without a
 * `<` there is nothing to find: HTML and autolinks start with one (a reference such as `&lt;` only ever becomes text),
 * the converter writes every `<` of text as `&lt;`, and its link targets are checked where it writes them; so only
 * Markdown with code holding a `<` (or a converter bug) is parsed, and a long report of prose costs nothing here.
 */
export function findUnsafeMarkdown(markdown: string): string | undefined {
  if (!markdown.includes('<')) return undefined;
  const stack: Token[] = permissive.parse(markdown, {});
  for (let token = stack.pop(); token !== undefined; token = stack.pop()) {
    if (token.type === 'html_block' || token.type === 'html_inline') return `raw HTML (${token.type})`;
    const target = token.type === 'link_open' ? token.attrGet('href') : token.attrGet('src');
    if (target !== null && !isSafeLinkTarget(String(target))) return `unsafe target in ${token.type}`;
    // One by one: a long paragraph has more inline tokens than a spread may pass as arguments.
    for (const child of token.children ?? []) stack.push(child);
  }
  return undefined;
}

/**
 * The version's context as neutralised Markdown: read as CommonMark (with GitHub's tables and strikethrough), its
 * raw HTML as text, then written by `toMarkdown` (the document's converter) and checked. The Markdown is the
 * converter's, not the agent's spelling (`_emphasis_`, `-   item`); what it renders is the same. If the converter's
 * output fails the check, the context is its own text, escaped.
 */
export function contextAsMarkdown(context: string, toMarkdown: (html: string) => string): string {
  const trimmed = context.trim();
  if (trimmed === '') return '';
  const markdown = toMarkdown(contextReader.render(trimmed)).trim();
  return findUnsafeMarkdown(markdown) === undefined ? markdown : escapeMarkdownText(trimmed);
}
