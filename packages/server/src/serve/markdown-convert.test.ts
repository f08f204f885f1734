/**
 * The readable copy's Markdown against hostile markup (docs/decisions/0031-markdown-copy-bounded-and-neutralised.md):
 * known bypasses of HTML-to-Markdown converters and Markdown sanitisers, as documents (markdown-convert.ts) and as
 * contexts (markdown-safety.ts). Each output is rendered by a real CommonMark renderer, markdown-it, configured as the
 * most permissive chat UI would be (raw HTML passed through, every link target kept, URLs linkified), and checked:
 * (a) no raw HTML reaches the page: no HTML token, only the tags and attributes Markdown itself makes; (b) no link
 * or image target with a scheme other than http, https or mailto, read after decoding references and `%XX` and
 * removing invisible characters; (c) where the case says so, the text shown is the text the document shows.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { renderingProblems, shownText } from '../../test/rendered-markdown.js';
import { escapeMarkdownText, isSafeLinkTarget, markdownLinkTarget } from '../domain/markdown-text.js';
import { createHtmlToMarkdown } from './markdown-convert.js';
import { contextAsMarkdown, findUnsafeMarkdown } from './markdown-safety.js';

const toMarkdown = createHtmlToMarkdown();

/** [name, document, text it must show (optional)]. */
const DOCUMENTS: ReadonlyArray<readonly [string, string, string?]> = [
  ['entity-encoded script tag', '<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>', '<script>alert(1)</script>'],
  ['entity-encoded img onerror', '<p>&lt;img src=x onerror=alert(1)&gt;</p>', '<img src=x onerror=alert(1)>'],
  ['double-encoded tag', '<p>&amp;lt;script&amp;gt;</p>', '&lt;script&gt;'],
  ['a tag split across elements', '<p>&lt;<span></span>svg onload=alert(1)&gt;</p>', '<svg onload=alert(1)>'],
  [
    'entity-encoded link markup',
    '<p>&lt;a href="javascript:alert(1)"&gt;x&lt;/a&gt;</p>',
    '<a href="javascript:alert(1)">x</a>',
  ],
  ['HTML block starters as text', '<p>&lt;div&gt;</p><p>&lt;?php x ?&gt;</p><p>&lt;!doctype html&gt;</p>', '<div>'],
  ['java&#x09;script: link', '<a href="java&#x09;script:alert(1)">tab</a>', 'tab'],
  ['java&#x0A;script: link', '<a href="jav&#x0A;ascript:alert(1)">newline</a>', 'newline'],
  ['JaVaScRiPt: link', '<a href="JaVaScRiPt:alert(1)">case</a>', 'case'],
  ['&#106;avascript: link', '<a href="&#106;avascript:alert(1)">decimal</a>', 'decimal'],
  [
    'zero-padded decimal references',
    '<a href="&#0000106&#0000097&#0000118&#0000097&#0000115&#0000099&#0000114&#0000105&#0000112&#0000116&#0000058alert(1)">pad</a>',
    'pad',
  ],
  ['javascript&colon; left for the renderer', '<a href="javascript&amp;colon;alert(1)">colon</a>', 'colon'],
  ['double-encoded scheme', '<a href="&amp;#106;avascript:alert(1)">double</a>', 'double'],
  ['percent-encoded colon', '<a href="javascript%3Aalert(1)">percent</a>', 'percent'],
  ['control characters before the scheme', '<a href=" &#14; javascript:alert(1)">ctl</a>', 'ctl'],
  ['zero-width space in the scheme', '<a href="java&#x200B;script:alert(1)">zw</a>', 'zw'],
  ['vbscript: link', '<a href="vbscript:msgbox(1)">vb</a>', 'vb'],
  ['data:text/html link', '<a href="data:text/html,&lt;script&gt;alert(1)&lt;/script&gt;">data</a>', 'data'],
  ['data: svg image', '<img src="data:image/svg+xml,&lt;svg onload=alert(1)&gt;" alt="chart">', 'chart'],
  ['javascript: image', '<img src="javascript:alert(1)" alt="js image">', 'js image'],
  ['img onerror', '<img src="x" onerror="alert(1)" alt="broken">'],
  ['svg onload', '<svg onload="alert(1)"><text>SVG_TEXT</text></svg><p>after</p>', 'after'],
  ['iframe', '<iframe src="javascript:alert(1)" srcdoc="&lt;script&gt;alert(1)&lt;/script&gt;"></iframe><p>ok</p>'],
  [
    'object, embed, form',
    '<object data="javascript:alert(1)"></object><form action="javascript:alert(1)"><button>go</button></form>',
  ],
  ['html comment', '<p>a<!-- <script>alert(1)</script> -->b</p><p>&lt;!-- x --&gt;</p>', '<!-- x -->'],
  ['CDATA', '<p>&lt;![CDATA[&lt;script&gt;alert(1)&lt;/script&gt;]]&gt;</p><![CDATA[<img src=x onerror=alert(1)>]]>'],
  [
    'style element and style text',
    '<style>body{background:url(javascript:alert(1))}</style><p>&lt;style&gt;</p>',
    '<style>',
  ],
  ['autolink in text', '<p>&lt;javascript:alert(1)&gt; and &lt;https://example.com&gt;</p>', '<javascript:alert(1)>'],
  [
    'a bare URL before a tag (a linkifier takes an escaping backslash)',
    '<p>https://example.com/&lt;javascript:alert(1)&gt; www.example.com&lt;img src=x onerror=alert(1)&gt;</p>',
  ],
  [
    'reference-style definition in text',
    '<p>[x]: javascript:alert(1)</p><p>[x] and [y](javascript:alert(2))</p>',
    '[x]: javascript:alert(1)',
  ],
  [
    'title attribute with quotes',
    `<a href="https://example.com/" title='x" onmouseover="alert(1)'>titled</a>`,
    'titled',
  ],
  ['onclick on a kept link', '<a href="https://example.com/" onclick="alert(1)">click</a>', 'click'],
  ['parentheses in the target', '<a href="https://example.com/a)(javascript:alert(1)">paren</a>', 'paren'],
  ['spaces and a tag in the target', '<a href="https://example.com/a b&quot;&gt;&lt;script&gt;">space</a>', 'space'],
  [
    'brackets in the link text',
    '<a href="https://example.com/">a](javascript:alert(1))[b</a>',
    'a](javascript:alert(1))[b',
  ],
  [
    'code span with <',
    '<p><code>&lt;script&gt;alert(1)&lt;/script&gt;</code> and <code>`a`</code></p>',
    '<script>alert(1)</script>',
  ],
  [
    'a code block flattened into a table cell',
    '<table><tr><td><pre><code>a ``` &lt;script&gt;alert(1)&lt;/script&gt;</code></pre></td></tr></table>',
  ],
  ['a backtick in the fence info string', '<pre><code class="language-x`y">&lt;b&gt;</code></pre><p>&lt;i&gt;</p>'],
  ['an indented closing fence in code', '<pre><code>a\n   ```\n&lt;script&gt;alert(1)&lt;/script&gt;\n</code></pre>'],
  [
    'a table formed from text around a code span',
    '<p>x |<br>| --- |<br>| <code>a|&lt;img src=x onerror=alert(1)&gt;</code> |</p>',
  ],
  [
    'pipes in code inside a table cell',
    '<table><tr><th>a</th><th>b</th></tr><tr><td><code>x|&lt;img src=x onerror=alert(1)&gt;</code></td><td>2</td></tr></table>',
  ],
  ['table caption', '<table><caption>&lt;script&gt;cap</caption><tr><td>1</td></tr></table>', '<script>cap'],
  ['nested and unbalanced tags', '<p><b><i>&lt;b&gt;x</b></i></p><div><p>&lt;/div&gt;&lt;script&gt;</div>', '<b>x'],
  ['mXSS through math and style', '<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>'],
  ['noscript title', '<noscript><p title="</noscript><img src=x onerror=alert(1)>"></noscript><p>t</p>'],
  ['base element', '<base href="javascript:/"><a href="/relative">rel</a>', 'rel'],
  ['a script link around an image', '<a href="javascript:alert(1)"><img src="https://example.com/i.png" alt="i"></a>'],
  ['entity in text', '<p>R&amp;D &amp;lt; &amp;#60; &amp;</p>', 'R&D &lt; &#60; &'],
];

describe('hostile documents (createHtmlToMarkdown)', () => {
  it.each(DOCUMENTS.map(([name, html, text]) => [name, html, text ?? ''] as const))(
    '%s: no raw HTML, no unsafe target, the same text',
    (_name, html, text) => {
      const markdown = toMarkdown(html);
      expect(renderingProblems(markdown), markdown).toEqual([]);
      expect(findUnsafeMarkdown(markdown), markdown).toBeUndefined();
      expect(shownText(markdown), markdown).toContain(text);
    },
  );
  it('keeps safe targets: http, https, mailto, relative, protocol-relative', () => {
    const markdown = toMarkdown(
      '<p><a href="https://example.com/a?b=1&amp;c=2#d">s</a> <a href="http://example.com">h</a> ' +
        '<a href="mailto:a@example.com">m</a> <a href="../x.html">r</a> <a href="//example.com/p">p</a> ' +
        '<img src="https://example.com/i.png" alt="i" title="T"></p>',
    );
    expect(markdown).toBe(
      '[s](https://example.com/a?b=1&c=2#d) [h](http://example.com) [m](mailto:a@example.com) [r](../x.html) ' +
        '[p](//example.com/p) ![i](https://example.com/i.png "T")',
    );
  });

  it('holds for random mixtures of the hostile pieces (fast-check)', () => {
    const pieces = fc.constantFrom(
      ...DOCUMENTS.map(([, html]) => html),
      '<p>',
      '</p>',
      '<code>',
      '</code>',
      '<pre>',
      '</pre>',
      '<table><tr><td>',
      '</td><td>',
      '</td></tr></table>',
      '<a href="https://example.com/">',
      '</a>',
      '`',
      '```',
      '|',
      '\n',
      '&lt;',
      '&amp;',
      '<br>',
      '---',
      '<li>',
      '[',
      ']',
      '(',
      '<ul>',
      '<ol>',
      '<blockquote>',
      '<h2>',
      '<em>',
      '<strong>',
      '<del>',
      '    ',
      '&gt;',
      '\\',
      '*',
      '_',
      '!',
      ':',
      '#',
      '<th>',
      '<img src="https://example.com/i.png" alt="',
      '">',
      '<a href="javascript:alert(1)">',
      'javascript:',
      '<',
      'script>',
      '<td>',
      '<h1>',
      '<span>',
      '</span>',
      '<b>',
      '</b>',
      '<pre><code>',
      '</code></pre>',
      '<dl><dt>',
      '<dd>',
      '<div>',
    );
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 12 }), (parts) => {
        const markdown = toMarkdown(parts.join(''));
        expect(renderingProblems(markdown), markdown).toEqual([]);
      }),
      { numRuns: Number(process.env.HTMLDROP_FUZZ_RUNS ?? 300) },
    );
  });
});

/** [name, context, text it must show (optional)]. */
const CONTEXTS: ReadonlyArray<readonly [string, string, string?]> = [
  ['script', 'Before <script>alert(1)</script> after', '<script>alert(1)</script>'],
  ['img onerror', '<img src=x onerror=alert(1)>', '<img src=x onerror=alert(1)>'],
  ['HTML block', '<div onmouseover="alert(1)">\n\n*md*\n\n</div>', '<div onmouseover="alert(1)">'],
  ['raw link', '<a href="javascript:alert(1)">x</a>'],
  ['svg and iframe', '<svg onload=alert(1)>\n\n<iframe src=javascript:alert(1)></iframe>'],
  ['comment', 'a <!-- <script>alert(1)</script> --> b', '<!--'],
  ['CDATA', '<![CDATA[<script>alert(1)</script>]]>'],
  ['style', '<style>body{}</style>', '<style>'],
  ['unbalanced', '<b><i>x</b> y', '<b><i>x</b>'],
  ['javascript: link', '[a](javascript:alert(1))', 'a'],
  ['java&#x09;script: link', '[tab](java&#x09;script:alert(1))', 'tab'],
  ['JaVaScRiPt: link', '[case](JaVaScRiPt:alert(1))', 'case'],
  ['&#106;avascript: link', '[dec](&#106;avascript:alert(1))', 'dec'],
  ['javascript&colon; link', '[colon](javascript&colon;alert(1))', 'colon'],
  ['percent-encoded colon', '[pct](javascript%3Aalert(1))', 'pct'],
  ['spaces around the target', '[sp]( javascript:alert(1) )', 'sp'],
  ['angle-bracket target', '[angle](<javascript:alert(1)>)', 'angle'],
  ['with a title', '[t](javascript:alert(1) "title")', 't'],
  ['autolink', '<javascript:alert(1)>', 'javascript:alert(1)'],
  [
    'a bare URL before an autolink',
    'https://example.com/<javascript:alert(1)> a@example.com<img src=x onerror=alert(1)>',
  ],
  ['reference-style link', '[ref]\n\n[ref]: vbscript:msgbox(1)', 'ref'],
  ['data: svg image', '![x](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+)', 'x'],
  ['data:text/html link', '[d](data:text/html,<script>alert(1)</script>)'],
  ['title with quotes', '[q](https://example.com/x "t\\" onmouseover=\\"alert(1)")', 'q'],
  ['parentheses in the target', '[p](https://example.com/a\\)\\(javascript:alert(1))', 'p'],
  ['code spans and blocks with <', '`<b>` and\n\n```html\n<script>alert(1)</script>\n```', '<script>alert(1)</script>'],
  ['tables with HTML and pipes in code', '| a | b |\n|---|---|\n| <img src=x onerror=alert(1)> | `x|<i>` |'],
  ['entity text stays text', '&lt;script&gt; and &amp;', '<script> and &'],
];

describe('hostile contexts (contextAsMarkdown)', () => {
  it.each(CONTEXTS.map(([name, context, text]) => [name, context, text ?? ''] as const))(
    '%s: no raw HTML, no unsafe target, the same text',
    (_name, context, text) => {
      const markdown = contextAsMarkdown(context, toMarkdown);
      expect(renderingProblems(markdown), markdown).toEqual([]);
      expect(shownText(markdown), markdown).toContain(text);
    },
  );
  it('holds for random mixtures of hostile Markdown (fast-check)', () => {
    const pieces = fc.constantFrom(
      ...CONTEXTS.map(([, context]) => context),
      '`',
      '``',
      '```',
      '\n',
      '\n\n',
      '    ',
      '> ',
      '- ',
      '1. ',
      '|',
      '---',
      '[',
      ']',
      '(',
      ')',
      '<',
      '>',
      '&',
      '#',
      '*',
      '<b>',
      '</b>',
      '<!--',
      '-->',
      'javascript:',
      'https://example.com/',
      '"',
      '\\',
      '![',
      '[x]: ',
      '<div>',
      '</div>',
    );
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 12 }), (parts) => {
        const markdown = contextAsMarkdown(parts.join(''), toMarkdown);
        expect(renderingProblems(markdown), markdown).toEqual([]);
      }),
      { numRuns: Number(process.env.HTMLDROP_FUZZ_RUNS ?? 300) },
    );
  });

  it('keeps the Markdown: headings, lists, emphasis, safe links and code', () => {
    const markdown = contextAsMarkdown(
      '## Why\n\n- first *point*\n- see [docs](https://example.com/docs)\n\n```js\nif (a < b) go();\n```',
      toMarkdown,
    );
    expect(markdown).toBe(
      '## Why\n\n-   first _point_\n-   see [docs](https://example.com/docs)\n\n```js\nif (a < b) go();\n```',
    );
  });
});

describe('text and targets (domain/markdown-text.ts)', () => {
  it('escapes text so that it renders as itself', () => {
    const text = '# x\n- y\n1. z\n<b> & &amp; | `c` *d* _e_ [f](g) ~~h~~ \\ ---';
    expect(shownText(escapeMarkdownText(text)).trim()).toBe(text.replace(/\n/g, '\n'));
    expect(renderingProblems(escapeMarkdownText(text))).toEqual([]);
  });

  it('keeps only safe schemes, decoded and squeezed first', () => {
    for (const safe of ['https://a.example/', 'HTTP://a', 'mailto:x@y', '/p', 'p/q:r', '?a:b', '#c:d', '//h/p']) {
      expect(isSafeLinkTarget(safe), safe).toBe(true);
    }
    for (const unsafe of [
      'javascript:x',
      ' JAVASCRIPT:x',
      'java\tscript:x',
      'java\u0000script:x',
      '&#106;avascript:x',
      'javascript&colon;x',
      'javascript%3ax',
      '&amp;#x6A;avascript:x',
      'vbscript:x',
      'data:text/html,x',
      'file:///etc/passwd',
      'x:y',
    ]) {
      expect(isSafeLinkTarget(unsafe), unsafe).toBe(false);
    }
    expect(markdownLinkTarget('https://a.example/x y(z)<w>`"\'\\é')).toBe(
      'https://a.example/x%20y%28z%29%3Cw%3E%60%22%27%5C%C3%A9',
    );
  });
});
