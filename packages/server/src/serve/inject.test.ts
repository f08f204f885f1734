import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFENSIVE_STYLE, injectDefensiveHead, VIEWPORT_META } from './inject.js';

/** What is added when the document has no viewport meta. */
const BOTH = VIEWPORT_META + DEFENSIVE_STYLE;
/** What is added when it already has one. */
const STYLE = DEFENSIVE_STYLE;
/** The same additions in a document with no `<head>` start tag: a head element is created around them. */
const HEAD_BOTH = `<head>${BOTH}</head>`;
const HEAD_STYLE = `<head>${STYLE}</head>`;

type Case = readonly [name: string, input: string, expected: string];

describe('constants (spec 4.6)', () => {
  it('are exactly the specified markup', () => {
    expect(DEFENSIVE_STYLE).toBe(
      '<style data-htmldrop>html,body{max-width:100vw;overflow-x:clip}img,svg,video,iframe{max-width:100%}pre,table{max-width:100%}</style>',
    );
    expect(VIEWPORT_META).toBe('<meta name="viewport" content="width=device-width, initial-scale=1">');
  });

  it('writes the full literal output for a normal document', () => {
    expect(injectDefensiveHead('<!doctype html><html><head><title>T</title></head><body>x</body></html>')).toBe(
      '<!doctype html><html><head><title>T</title><meta name="viewport" content="width=device-width, initial-scale=1">' +
        '<style data-htmldrop>html,body{max-width:100vw;overflow-x:clip}img,svg,video,iframe{max-width:100%}' +
        'pre,table{max-width:100%}</style></head><body>x</body></html>',
    );
  });
});

const placementCases: readonly Case[] = [
  [
    'normal document: at the end of the head',
    '<!doctype html><html><head><meta charset="utf-8"><title>T</title></head><body><p>x</p></body></html>',
    `<!doctype html><html><head><meta charset="utf-8"><title>T</title>${BOTH}</head><body><p>x</p></body></html>`,
  ],
  [
    'no head: after the html start tag',
    '<!doctype html><html lang="en"><body><p>x</p></body></html>',
    `<!doctype html><html lang="en">${HEAD_BOTH}<body><p>x</p></body></html>`,
  ],
  [
    'no head, head elements present: after them (end of the implied head)',
    '<!DOCTYPE html><meta charset="utf-8"><title>T</title><p>x</p>',
    `<!DOCTYPE html><meta charset="utf-8"><title>T</title>${HEAD_BOTH}<p>x</p>`,
  ],
  ['no html: after the doctype', '<!doctype html><p>x</p>', `<!doctype html>${HEAD_BOTH}<p>x</p>`],
  [
    'no html but a head',
    '<!doctype html><head><title>T</title></head><p>x</p>',
    `<!doctype html><head><title>T</title>${BOTH}</head><p>x</p>`,
  ],
  ['no doctype', '<html><head></head><body></body></html>', `<html><head>${BOTH}</head><body></body></html>`],
  [
    'uppercase and spaced tags',
    '<!DOCTYPE HTML><HTML><HEAD><TITLE>T</TITLE></Head ><BODY>x</BODY></HTML>',
    `<!DOCTYPE HTML><HTML><HEAD><TITLE>T</TITLE>${BOTH}</Head ><BODY>x</BODY></HTML>`,
  ],
  [
    'end tag with attributes',
    '<head><title>T</title></head class="a>b"><body>',
    `<head><title>T</title>${BOTH}</head class="a>b"><body>`,
  ],
  ['<head> only inside a comment', '<!-- <head></head> --><p>x</p>', `<!-- <head></head> -->${HEAD_BOTH}<p>x</p>`],
  [
    '</head> inside a comment before the real head',
    '<!doctype html><!-- </head> --><html><head><title>t</title></head><body></body></html>',
    `<!doctype html><!-- </head> --><html><head><title>t</title>${BOTH}</head><body></body></html>`,
  ],
  [
    'comment closed with --!> and extra dashes',
    '<head><!-- </head> --!><!-- </head> ---><title>t</title></head>',
    `<head><!-- </head> --!><!-- </head> ---><title>t</title>${BOTH}</head>`,
  ],
  ['<!--> is a complete empty comment', '<!--><p>x</p>', `<!-->${HEAD_BOTH}<p>x</p>`],
  [
    '</head> inside a script string',
    '<html><head><script>var s = "</head><body>";</script><title>t</title></head><body></body></html>',
    `<html><head><script>var s = "</head><body>";</script><title>t</title>${BOTH}</head><body></body></html>`,
  ],
  [
    'script with a double-escaped inner </script>',
    '<head><script><!--<script>"</script></head>"--></script></head>',
    `<head><script><!--<script>"</script></head>"--></script>${BOTH}</head>`,
  ],
  [
    'script: </script> after an escaped inner script closes it',
    '<head><script><!--<script></script></script>x</head>',
    `<head><script><!--<script></script></script>${BOTH}x</head>`,
  ],
  [
    '</scripts> does not close a script',
    '<head><script>a="</scripts></head>"</script ></head>',
    `<head><script>a="</scripts></head>"</script >${BOTH}</head>`,
  ],
  [
    '</head> inside style, title and noscript raw text',
    '<head><style>/* </head> */</style><title></head></title><noscript></head><p></noscript></head><body>',
    `<head><style>/* </head> */</style><title></head></title><noscript></head><p></noscript>${BOTH}</head><body>`,
  ],
  [
    '</head> inside textarea (which itself starts the body)',
    '<textarea></head></textarea>',
    `${HEAD_BOTH}<textarea></head></textarea>`,
  ],
  [
    '</head> and > inside attribute values',
    '<html><head lang="x" data-a=\'</head>\'><link href="a>b.css" rel=stylesheet></head><body>',
    `<html><head lang="x" data-a='</head>'><link href="a>b.css" rel=stylesheet>${BOTH}</head><body>`,
  ],
  [
    'head with attributes',
    '<html><head lang="x"><title>t</title></head><body></body></html>',
    `<html><head lang="x"><title>t</title>${BOTH}</head><body></body></html>`,
  ],
  [
    '<header> with no head: it starts the body',
    '<!doctype html><header><h1>Head</h1></header>',
    `<!doctype html>${HEAD_BOTH}<header><h1>Head</h1></header>`,
  ],
  [
    '<header> in the body is not the head',
    '<html><head><title>t</title></head><body><header>x</header></body></html>',
    `<html><head><title>t</title>${BOTH}</head><body><header>x</header></body></html>`,
  ],
  [
    '<header> inside the head ends it (as a browser does)',
    '<head><title>t</title><header>x</header></head>',
    `<head><title>t</title>${BOTH}<header>x</header></head>`,
  ],
  [
    'head without end tag: before <body>',
    '<html><head><title>t</title><body>hi</body></html>',
    `<html><head><title>t</title>${BOTH}<body>hi</body></html>`,
  ],
  [
    'head without end tag: before a body-only element',
    '<head><link rel="stylesheet" href="a.css"><div>x</div>',
    `<head><link rel="stylesheet" href="a.css">${BOTH}<div>x</div>`,
  ],
  [
    'head without end tag: before the first non-whitespace text',
    '<head><title>t</title>\n  hello',
    `<head><title>t</title>\n  ${BOTH}hello`,
  ],
  ['head without end tag: at the end of the document', '<head><title>t</title>\n', `<head><title>t</title>\n${BOTH}`],
  ['head without end tag: before </body>', '<head><title>t</title></body>', `<head><title>t</title>${BOTH}</body>`],
  [
    'ignored end tags do not end the head',
    '<head></p></div><title>t</title></head>',
    `<head></p></div><title>t</title>${BOTH}</head>`,
  ],
  [
    'template contents do not end the head',
    '<head><template><p>x</p></head></template><title>t</title></head>',
    `<head><template><p>x</p></head></template><title>t</title>${BOTH}</head>`,
  ],
  ['unclosed template: before it', '<head><template><p>x', `<head>${BOTH}<template><p>x`],
  ['unclosed comment: before it', '<html><head><!-- never closed', `<html><head>${BOTH}<!-- never closed`],
  ['unclosed title: before it', '<head><title>x', `<head>${BOTH}<title>x`],
  ['unclosed script: before it', '<head><script>let a = 1', `<head>${BOTH}<script>let a = 1`],
  ['unclosed tag: before it', '<head><link href="x', `<head>${BOTH}<link href="x`],
  [
    'processing instruction',
    '<?xml version="1.0"?><html><head></head>',
    `<?xml version="1.0"?><html><head>${BOTH}</head>`,
  ],
  ['leading comment and whitespace stay before', '<!-- hi -->\n<html>\n<p>', `<!-- hi -->\n<html>\n${HEAD_BOTH}<p>`],
  ['a stray < is text', '<head><title>t</title><3', `<head><title>t</title>${BOTH}<3`],
  ['text-only document', 'hello', `${HEAD_BOTH}hello`],
  ['whitespace then text', '  hello', `  ${HEAD_BOTH}hello`],
  ['empty string', '', HEAD_BOTH],
  ['only a doctype', '<!doctype html>', `<!doctype html>${HEAD_BOTH}`],
  ['a lone </ at the end', '</', `${HEAD_BOTH}</`],
  ['</> is dropped', '</><p>', `</>${HEAD_BOTH}<p>`],
  [
    'BOM at the start is preserved and stays first',
    '\uFEFF<!doctype html><html><head></head><body></body></html>',
    `\uFEFF<!doctype html><html><head>${BOTH}</head><body></body></html>`,
  ],
  ['BOM then text', '\uFEFFhello', `\uFEFF${HEAD_BOTH}hello`],
  ['BOM only', '\uFEFF', `\uFEFF${HEAD_BOTH}`],
  [
    'CRLF line endings preserved',
    '<!DOCTYPE html>\r\n<html>\r\n<head>\r\n<title>T</title>\r\n</head>\r\n<body>\r\n</body>\r\n</html>\r\n',
    `<!DOCTYPE html>\r\n<html>\r\n<head>\r\n<title>T</title>\r\n${BOTH}</head>\r\n<body>\r\n</body>\r\n</html>\r\n`,
  ],
  [
    'non-ASCII content and odd characters preserved',
    '<html><head><title>Ünïcödé 😀 \u0000</title></head><body>€</body></html>',
    `<html><head><title>Ünïcödé 😀 \u0000</title>${BOTH}</head><body>€</body></html>`,
  ],
  ['Kelvin sign is not an ASCII k in a tag name', '<head><lin\u212A></head>', `<head>${BOTH}<lin\u212A></head>`],
];

const viewportCases: readonly Case[] = [
  [
    'double-quoted',
    '<html><head><meta name="viewport" content="width=device-width"></head>',
    `<html><head><meta name="viewport" content="width=device-width">${STYLE}</head>`,
  ],
  [
    'NAME=viewport (uppercase attribute, unquoted)',
    '<html><head><meta NAME=viewport content="width=500"></head>',
    `<html><head><meta NAME=viewport content="width=500">${STYLE}</head>`,
  ],
  [
    'single quotes, attribute order, value case',
    "<html><head><meta content='width=500' name='ViewPort'></head>",
    `<html><head><meta content='width=500' name='ViewPort'>${STYLE}</head>`,
  ],
  [
    'uppercase META, unquoted, spaces around =',
    '<HTML><HEAD><META name = VIEWPORT></HEAD>',
    `<HTML><HEAD><META name = VIEWPORT>${STYLE}</HEAD>`,
  ],
  ['self-closing', '<head><meta name="viewport" /></head>', `<head><meta name="viewport" />${STYLE}</head>`],
  ['anywhere in the body', '<p>x</p><meta name=viewport>', `${HEAD_STYLE}<p>x</p><meta name=viewport>`],
  ['without a head', '<meta name=viewport content=x><p>', `<meta name=viewport content=x>${HEAD_STYLE}<p>`],
];

const notViewportCases: readonly Case[] = [
  [
    'only inside a comment',
    '<html><head><!-- <meta name="viewport" content="x"> --></head>',
    `<html><head><!-- <meta name="viewport" content="x"> -->${BOTH}</head>`,
  ],
  [
    'only inside a script',
    '<head><script>"<meta name=viewport>"</script></head>',
    `<head><script>"<meta name=viewport>"</script>${BOTH}</head>`,
  ],
  [
    'only inside a title',
    '<head><title><meta name=viewport></title></head>',
    `<head><title><meta name=viewport></title>${BOTH}</head>`,
  ],
  [
    'only inside a template',
    '<head><template><meta name=viewport></template></head>',
    `<head><template><meta name=viewport></template>${BOTH}</head>`,
  ],
  [
    'only inside an attribute value',
    '<head><link title=\'<meta name="viewport">\'></head>',
    `<head><link title='<meta name="viewport">'>${BOTH}</head>`,
  ],
  ['another name', '<head><meta name="viewport-x"></head>', `<head><meta name="viewport-x">${BOTH}</head>`],
  ['another attribute', '<head><meta property="viewport"></head>', `<head><meta property="viewport">${BOTH}</head>`],
  [
    'a later duplicate name attribute (the first wins)',
    '<head><meta name="x" name="viewport"></head>',
    `<head><meta name="x" name="viewport">${BOTH}</head>`,
  ],
  [
    'unquoted value swallowing the slash ("viewport/")',
    '<head><meta name=viewport/></head>',
    `<head><meta name=viewport/>${BOTH}</head>`,
  ],
  [
    'name attribute on another element',
    '<head></head><div name="viewport">',
    `<head>${BOTH}</head><div name="viewport">`,
  ],
  ['unclosed meta at the end', '<head><meta name="viewport"', `<head>${BOTH}<meta name="viewport"`],
];

describe('injectDefensiveHead placement (spec 4.6)', () => {
  it.each(placementCases)('%s', (_name, input, expected) => {
    expect(injectDefensiveHead(input)).toBe(expected);
  });
});

describe('injectDefensiveHead viewport detection (spec 4.6)', () => {
  it.each(viewportCases)('keeps an existing viewport: %s', (_name, input, expected) => {
    expect(injectDefensiveHead(input)).toBe(expected);
  });
  it.each(notViewportCases)('injects one when the viewport is %s', (_name, input, expected) => {
    expect(injectDefensiveHead(input)).toBe(expected);
  });
});

/** Removes what injectDefensiveHead added; fails the test if the output is not input + one contiguous addition. */
function removeAddition(input: string, output: string): { rest: string; at: number; addition: string } {
  const added = output.length - input.length;
  const addition = [BOTH, STYLE, HEAD_BOTH, HEAD_STYLE].find((a) => a.length === added) ?? BOTH;
  expect(added).toBe(addition.length);
  // The addition is the one place where output and input first differ (it may also appear verbatim in the input).
  let at = 0;
  while (at < input.length && output.charCodeAt(at) === input.charCodeAt(at)) at++;
  while (at > 0 && output.slice(at, at + addition.length) !== addition) at--;
  expect(output.slice(at, at + addition.length)).toBe(addition);
  return { rest: output.slice(0, at) + output.slice(at + addition.length), at, addition };
}

/** Fragments that exercise the scanner's states. */
const htmlish = fc.string({
  unit: fc.constantFrom(
    '<',
    '>',
    '/',
    '!',
    '-',
    '=',
    '"',
    "'",
    ' ',
    '\r\n',
    'a',
    '\uFEFF',
    '<!--',
    '-->',
    '<!doctype html>',
    '<html>',
    '<head>',
    '<HEAD lang="x">',
    '</head>',
    '</Head >',
    '<body>',
    '</body>',
    '<header>',
    '<title>',
    '</title>',
    '<script>',
    '</script>',
    '<style>',
    '</style>',
    '<template>',
    '</template>',
    '<meta name=viewport>',
    '<meta name="viewport" content="x">',
    '<p>',
    'text',
  ),
  maxLength: 40,
});

describe('injectDefensiveHead properties', () => {
  it('only adds: removing the addition gives back the input (arbitrary strings)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary' }), fc.string(), htmlish), (input) => {
        expect(removeAddition(input, injectDefensiveHead(input)).rest).toBe(input);
      }),
      { numRuns: 2000 },
    );
  });

  it('only adds, for strings wrapped in a full document', () => {
    const part = fc.oneof(fc.string({ unit: 'binary' }), fc.string(), htmlish);
    fc.assert(
      fc.property(part, part, (head, body) => {
        const input = `<html><head>${head}</head><body>${body}</body></html>`;
        expect(removeAddition(input, injectDefensiveHead(input)).rest).toBe(input);
      }),
      { numRuns: 2000 },
    );
  });

  it('in a well-formed document with plain head content, adds right before </head>', () => {
    const plain = fc.string({ unit: fc.constantFrom(' ', '\n', '<title>a</title>', '<meta charset=utf-8>') });
    fc.assert(
      fc.property(plain, fc.string(), (head, body) => {
        const input = `<html><head>${head}</head><body>${body}</body></html>`;
        expect(injectDefensiveHead(input)).toBe(`<html><head>${head}${BOTH}</head><body>${body}</body></html>`);
      }),
    );
  });

  it('the additions land in the data state: running again finds the viewport and adds the style right after', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary' }), htmlish), (input) => {
        const once = injectDefensiveHead(input);
        const { at, addition } = removeAddition(input, once);
        const twice = injectDefensiveHead(once);
        // A created head ends at its own `</head>`: the second style goes inside it.
        const end = at + addition.length - (addition.startsWith('<head>') ? '</head>'.length : 0);
        expect(twice).toBe(once.slice(0, end) + STYLE + once.slice(end));
      }),
      { numRuns: 2000 },
    );
  });
});

describe('injectDefensiveHead is linear on adversarial input', () => {
  const size = 400_000;
  const inputs: readonly (readonly [string, string])[] = [
    ['many <', '<'.repeat(size)],
    ['many unclosed comments', '<!--'.repeat(size / 4)],
    ['many dashes in a comment', `<!--${'-'.repeat(size)}`],
    ['many </ in a title', `<title>${'</'.repeat(size / 2)}`],
    ['many escapes in a script', `<script>${'<!--<script>'.repeat(size / 12)}`],
    ['many attributes', `<p ${'a=b '.repeat(size / 4)}`],
    ['many tags', '<a>'.repeat(size / 3)],
    ['whitespace in the head', `<head>${' '.repeat(size)}`],
  ];
  it.each(inputs)('%s', (_name, input) => {
    const started = performance.now();
    const output = injectDefensiveHead(input);
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(removeAddition(input, output).rest).toBe(input);
  });
});
