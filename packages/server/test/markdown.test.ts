/**
 * The readable copy (docs/api.md, "Readable copy (Markdown)"; docs/decisions/0025-markdown-copy.md): the converter's
 * rules and the text fallback as units, the worker's bounds, and `/p/<slug>.md` and `Accept: text/markdown` on a
 * real app. The worker runs from the build (dist/serve/markdown-worker.js), which `npm test` makes first.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { escapeMarkdownText } from '../src/domain/markdown-text.js';
import { textOfHtml } from '../src/domain/plain-text.js';
import { composeReadableCopy } from '../src/domain/readable-copy.js';
import { prefersMarkdown } from '../src/http/routes/public.js';
import { createHtmlToMarkdown } from '../src/serve/markdown-convert.js';
import {
  type ConverterBusy,
  createMarkdownCopies,
  type MarkdownCopyOptions,
  type ReadableText,
} from '../src/serve/markdown-copy.js';
import type { WorkerEvent } from '../src/serve/markdown-runner.js';
import { createHarness, createTestClock, type Harness, page } from './helpers.js';
import { renderingProblems, shownText } from './rendered-markdown.js';

const SECRET_SCRIPT = 'SCRIPT_SECRET_7f3a';

/** A document with what an agent wants to read and what it must not get. */
const REPORT = `<!doctype html><html><head><title>Ignored title</title>
<style>body { color: STYLE_SECRET; }</style>
<script>window.token = "${SECRET_SCRIPT}";</script></head>
<body>
<h1>Quarterly report</h1>
<p>Read the <a href="https://example.com/method">method</a> first.</p>
<h2>Numbers</h2>
<table>
  <thead><tr><th>Region</th><th>Sales</th></tr></thead>
  <tbody><tr><td>North</td><td>12 | 13</td></tr><tr><td>South</td><td>7</td></tr></tbody>
</table>
<h3>Notes</h3>
<ul><li>first point</li><li>second point<ul><li>nested point</li></ul></li></ul>
<pre><code class="language-js">const total = 19;</code></pre>
<template><p>TEMPLATE_SECRET</p></template><noscript>NOSCRIPT_SECRET</noscript>
<iframe src="https://example.com">IFRAME_SECRET</iframe><svg><text>SVG_SECRET</text></svg><canvas>CANVAS_SECRET</canvas>
<script type="module">console.log("${SECRET_SCRIPT}")</script>
<p>The end.</p>
</body></html>`;

const HIDDEN = [SECRET_SCRIPT, 'STYLE_SECRET', 'TEMPLATE_SECRET', 'NOSCRIPT_SECRET', 'IFRAME_SECRET', 'SVG_SECRET'];

/** About 2 MiB of a long report: prose, lists, tables and code, as a generated document might be. */
function largeReport(bytes = 2_097_152 - 1024): string {
  const prose = 'The quarter closed with steady growth in every region, and the details follow below. '.repeat(6);
  const rows = Array.from({ length: 6 }, (_, i) => `<tr><td>Row ${i}</td><td>${i * 17}</td><td>ok</td></tr>`);
  const section = (n: number) =>
    `<section><h2>Section ${n}</h2><p>${prose}</p><p>${prose}</p><ul><li>one</li><li>two</li><li>three</li></ul>` +
    `<table><tr><th>Name</th><th>Value</th><th>State</th></tr>${rows.join('')}</table>` +
    `<pre><code>total(${n});</code></pre></section>\n`;
  const head = '<!doctype html><html><head><title>Large</title></head><body>';
  const parts = [head];
  let length = head.length;
  for (let n = 0; length < bytes - 3000; n++) {
    const next = section(n);
    parts.push(next);
    length += next.length;
  }
  return `${parts.join('')}</body></html>`;
}

/**
 * CPU time of this process's main thread, the event loop (user and system, from /proc; 10 ms ticks). Unlike wall
 * time or event-loop utilisation it does not grow when other processes crowd the machine.
 */
function eventLoopCpuMs(): number {
  const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Main-thread CPU milliseconds `work` takes. */
async function cpuOf(work: () => unknown): Promise<number> {
  const before = eventLoopCpuMs();
  await work();
  return eventLoopCpuMs() - before;
}

/** Deeply nested markup: the DOM builder's time grows with the square of the depth. */
const NESTED = `${'<div>'.repeat(190_000)}deep text`;

describe('the converter (serve/markdown-convert.ts)', () => {
  const toMarkdown = createHtmlToMarkdown();

  it('keeps headings, GFM tables, lists, links and code, and drops scripts, styles and non-text content', () => {
    const markdown = toMarkdown(REPORT);
    expect(markdown).toContain('# Quarterly report');
    expect(markdown).toContain('## Numbers');
    expect(markdown).toContain('### Notes');
    expect(markdown).toContain('Read the [method](https://example.com/method) first.');
    expect(markdown).toContain('| Region | Sales |\n| --- | --- |\n| North | 12 \\| 13 |\n| South | 7 |');
    expect(markdown).toMatch(/- {3}first point\n- {3}second point\n {4}- {3}nested point/);
    expect(markdown).toContain('```js\nconst total = 19;\n```');
    expect(markdown).toContain('The end.');
    for (const hidden of [...HIDDEN, 'CANVAS_SECRET', 'Ignored title']) expect(markdown).not.toContain(hidden);
  });

  it('gives a table without <th> its first row as header, pads short headers, and flattens cells to one line', () => {
    const markdown = toMarkdown(
      '<table><caption>Totals</caption><tr><td>a</td><td>b</td></tr><tr><td>1</td><td>2<br>3</td><td>x</td></tr>' +
        '<tr><td colspan="2">wide</td><td>z</td></tr></table>',
    );
    expect(markdown).toBe('Totals\n\n| a | b |  |\n| --- | --- | --- |\n| 1 | 2 3 | x |\n| wide |  | z |');
  });

  it('writes inline images as their alternative text and javascript: links as their text', () => {
    const markdown = toMarkdown(
      '<p><img src="data:image/png;base64,AAAA" alt="a chart"> <img src="https://example.com/i.png" alt="photo">' +
        ' <a href="javascript:alert(1)">click</a></p>',
    );
    expect(markdown).toContain('a chart');
    expect(markdown).not.toContain('base64');
    expect(markdown).toContain('![photo](https://example.com/i.png)');
    expect(markdown).toContain('click');
    expect(markdown).not.toContain('javascript:');
  });
});

describe('the text fallback (domain/plain-text.ts)', () => {
  it('keeps the text by blocks and skips tags, comments, scripts, styles and the dropped elements', () => {
    const text = textOfHtml(
      `<p>Hello &amp; <b title="a>b">welcome</b></p><!-- a <p>comment</p> -->` +
        `<script>if (a < b) "</p>${SECRET_SCRIPT}"</script>` +
        '<style>p{}</style><template><p>TEMPLATE_SECRET</p></template><svg><text>SVG_SECRET</text></svg>' +
        '<svg/><div>after &#x263A; &#9731; 1 < 2</div><textarea>NOT TEXT</textarea><ul><li>one</li><li>two</li></ul>',
    );
    expect(text).toBe('Hello & welcome\n\nafter \u263a \u2603 1 < 2\n\none\n\ntwo');
  });

  it('reads tag names in any case, short or long, and collapses blank space', () => {
    // Short names are looked up by their character codes, longer ones by their lower-cased text: both in any case.
    expect(
      textOfHtml(
        '<TD>a</Td><tH>b</TH><DIV>c</div><BlockQuote>d</BLOCKQUOTE><ScRiPt>NO1</sCrIpT><TEXTAREA>NO2</textarea>' +
          '<TEMPLATE>NO3</Template><HEAD>NO4</head><Spanx>e</Spanx><FigCaption>f</FIGCAPTION><PlainText><b>raw</b> &amp;',
      ),
    ).toBe('a b\nc\n\nd\ne\nf\n<b>raw</b> &amp;');
    expect(textOfHtml('<p>one \t two\u00a0\u00a0three\r\nfour</p>  <p> five </p>\n\n\n\n<p>six</p>')).toBe(
      'one two three\nfour\n\nfive\n\nsix',
    );
  });

  it('drops the rest of the document after an unclosed script', () => {
    expect(textOfHtml(`<p>kept</p><script>${SECRET_SCRIPT} <p>never`)).toBe('kept');
  });

  it('stays linear on hostile markup (measured, not asserted tightly)', () => {
    for (const [name, html] of [
      ['nested divs', NESTED],
      ['unclosed scripts', '<script>'.repeat(200_000)],
      ['unclosed svgs', '<svg><p>x</p>'.repeat(150_000)],
      ['lone <', '<'.repeat(2_000_000)],
    ] as const) {
      const started = performance.now();
      textOfHtml(html);
      const ms = performance.now() - started;
      console.log(`textOfHtml, ${name} (${(html.length / 1_048_576).toFixed(1)} MiB): ${ms.toFixed(0)} ms`);
      expect(ms).toBeLessThan(2000);
    }
  });
});

describe('content negotiation (prefersMarkdown)', () => {
  it.each([
    ['text/markdown', true],
    ['text/markdown, text/html;q=0.9', true],
    ['text/markdown;q=0.9, */*;q=0.1', true],
    ['text/html;q=0.5, text/markdown', true],
    ['text/plain, text/markdown', true],
    ['text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8', false],
    ['text/html, text/markdown', false],
    ['text/markdown;q=0', false],
    ['*/*', false],
    ['text/*', false],
    [undefined, false],
  ])('Accept %s: Markdown %s', (accept, expected) => {
    expect(prefersMarkdown(accept)).toBe(expected);
  });
});

describe('the readable copy around the document (domain/readable-copy.ts)', () => {
  const drop = {
    slug: 'abc',
    title: 'Plan *v2* # draft',
    description: '- not a list\n1. not either',
    latestVersion: 3,
  };
  const shown = { version: 2, createdAt: Date.UTC(2026, 10, 21, 12, 30) };

  it('escapes the title and description, says which version it is, and puts the context last', () => {
    const parts = { drop, shown, documentText: 'Body.', context: 'Check the totals.', baseUrl: 'https://d.test' };
    const copy = composeReadableCopy(parts);
    expect(copy).toBe(
      [
        '# Plan \\*v2\\* \\# draft',
        '',
        '\\- not a list\n1\\. not either',
        '',
        '- Version: 2 of 3 (not the latest: https://d.test/p/abc.md)',
        '- Published: 2026-11-21 12:30 UTC',
        '- Viewer: https://d.test/p/abc?v=2',
        '',
        '---',
        '',
        'Body.',
        '',
        '---',
        '',
        '## Context',
        '',
        'Check the totals.',
        '',
      ].join('\n'),
    );
    // `<` as a reference: a linkifier may take a backslash before it into a URL (domain/markdown-text.ts).
    expect(escapeMarkdownText('a_b [c] <d> `e`')).toBe('a\\_b \\[c\\] &lt;d\\> \\`e\\`');
  });
});

/** A version as the route hands it to the converter: its name, a way to read its document, and its context. */
const version = (key: string, html: string, context = '') => ({ key, document: async () => html, context });

/** The document's text of an answer that is not `busy`. */
function textOf(answer: ReadableText | ConverterBusy | undefined): string {
  if (answer === undefined || answer.outcome === 'busy') throw new Error(`no text: ${JSON.stringify(answer)}`);
  return answer.document.toString('utf8');
}

/** 2 MiB that turndown cannot convert and whose plain text takes about 0.1-0.4 s: the fallback's worst case. */
const PATHOLOGICAL = '<div>x'.repeat(349_000);

/** Converters whose worker's starts and stops are recorded, with a way to await the next event of a kind. */
function watchedCopies(options: MarkdownCopyOptions) {
  const events: WorkerEvent[] = [];
  const waiting: Array<{ kind: string; resolve: (event: WorkerEvent) => void }> = [];
  const copies = createMarkdownCopies({
    ...options,
    onWorker: (event) => {
      events.push(event);
      const index = waiting.findIndex((w) => w.kind === event.kind);
      if (index >= 0) waiting.splice(index, 1)[0]?.resolve(event);
    },
  });
  const next = (kind: WorkerEvent['kind']) =>
    new Promise<WorkerEvent>((resolve) => {
      waiting.push({ kind, resolve });
    });
  return { copies, events, next };
}

describe('the bounded worker (serve/markdown-copy.ts, markdown-runner.ts)', () => {
  it('terminates a conversion past its time and answers the text, made in the worker; the next converts again', async () => {
    const copies = createMarkdownCopies({ timeoutMs: 300 });
    try {
      const started = performance.now();
      const slow = await copies.readableText(version('nested', NESTED));
      console.log(`worker timeout path (300 ms bound): ${(performance.now() - started).toFixed(0)} ms`);
      expect(slow?.outcome).toBe('timeout');
      expect(textOf(slow)).toBe('deep text');
      expect(slow).toMatchObject({ detail: 'over 300 ms' });
      // The plain text came from the worker too: one conversion, one plain-text pass.
      expect(copies.stats()).toMatchObject({ conversions: 1, textFallbacks: 1 });
      // Kept: the same document is not tried again.
      const again = await copies.readableText(version('nested', NESTED));
      expect(again).toMatchObject({ outcome: 'timeout', convertMs: 0 });
      expect(again).not.toHaveProperty('detail');
      expect(copies.stats()).toMatchObject({ conversions: 1, textFallbacks: 1 });
      const next = await copies.readableText(version('report', REPORT));
      expect(next?.outcome).toBe('converted');
      expect(textOf(next)).toContain('# Quarterly report');
    } finally {
      await copies.close();
    }
  });

  it('makes the plain text of a pathological document in the worker: the event loop stays free', async () => {
    const aloneCpuMs = await cpuOf(() => textOfHtml(PATHOLOGICAL));
    const copies = createMarkdownCopies({ timeoutMs: 300 });
    try {
      let answer: ReadableText | ConverterBusy | undefined;
      const loopCpuMs = await cpuOf(async () => {
        answer = await copies.readableText(version('pathological', PATHOLOGICAL));
      });
      console.log(
        `plain-text fallback of 2 MiB: the event loop used ${loopCpuMs} ms of CPU meanwhile; the plain text alone ` +
          `takes ${aloneCpuMs} ms of CPU on one thread`,
      );
      expect(answer?.outcome).toBe('timeout');
      expect(textOf(answer)).toContain('x\nx\nx\nx');
      expect(copies.stats()).toMatchObject({ conversions: 1, textFallbacks: 1 });
      // Everything the event loop did while the worker converted, failed and made the text (starting the worker,
      // handing the document over, taking the text back): less than making the text alone, which the loop would
      // have spent on top had it made the text itself. Half of it was the bound while the text took 120 ms; it takes
      // 50-60 ms since textOfHtml got faster, and the loop's own share stayed at 10-30 ms (counted in 10 ms ticks).
      expect(loopCpuMs).toBeLessThan(aloneCpuMs);
    } finally {
      await copies.close();
    }
  });

  it('shares one conversion between concurrent requests, and answers busy at once when too many wait', async () => {
    const copies = createMarkdownCopies({ timeoutMs: 300, maxQueued: 1 });
    try {
      // A started worker takes the first document at once; one more may wait; the next is answered busy.
      expect(await copies.readableText(version('warm', '<p>warm</p>'))).toMatchObject({ outcome: 'converted' });
      const [a, b, c, d] = await Promise.all([
        copies.readableText(version('slow', NESTED)),
        copies.readableText(version('slow', NESTED)),
        copies.readableText(version('one', '<p>one</p>')),
        copies.readableText(version('two', '<p>two</p>')),
      ]);
      expect(a?.outcome).toBe('timeout');
      expect(b?.outcome).toBe('timeout');
      expect(textOf(a)).toBe(textOf(b));
      expect(copies.stats()).toMatchObject({ conversions: 3, textFallbacks: 1 });
      expect(textOf(c)).toBe('one');
      expect(d).toEqual({ outcome: 'busy', retryAfterSeconds: 1, detail: 'queue full' });
      // Busy is no property of the document: it is converted on the next request.
      expect(await copies.readableText(version('two', '<p>two</p>'))).toMatchObject({ outcome: 'converted' });
    } finally {
      await copies.close();
    }
  });

  it('answers busy when the worker cannot start, and after close', async () => {
    const missing = new URL('./no-such-worker.js', import.meta.url);
    const broken = createMarkdownCopies({ workerUrl: missing });
    expect(await broken.readableText(version('k', '<p>still text</p>'))).toMatchObject({
      outcome: 'busy',
      retryAfterSeconds: 3,
    });
    await broken.close();
    expect(await broken.readableText(version('k2', '<p>closed</p>'))).toMatchObject({
      outcome: 'busy',
      detail: 'closed',
    });
  });

  it('converts the context with the document, and reads a document only when it must', async () => {
    const copies = createMarkdownCopies({ maxQueued: 0, timeoutMs: 300 });
    try {
      let reads = 0;
      const counted = (key: string, html: string, context: string) => ({
        key,
        document: async () => {
          reads++;
          return html;
        },
        context,
      });
      const [one, same] = await Promise.all([
        copies.readableText(counted('one', '<p>doc</p>', 'one *two* <script>x</script>')),
        copies.readableText(counted('one', '<p>doc</p>', 'one *two* <script>x</script>')),
      ]);
      expect(one?.outcome === 'converted' && one.context.toString()).toBe('one _two_ &lt;script>x&lt;/script>');
      expect(same?.outcome === 'converted' && same.context.toString()).toBe('one _two_ &lt;script>x&lt;/script>');
      expect(reads).toBe(1);
      // Kept: answered without reading it again.
      expect(textOf(await copies.readableText(counted('one', '<p>doc</p>', '')))).toBe('doc');
      expect(reads).toBe(1);
      // A full queue is answered before the document is read.
      const [running, refused] = await Promise.all([
        copies.readableText(counted('slow', NESTED, '')),
        copies.readableText(counted('refused', '<p>x</p>', '')),
      ]);
      expect(refused).toMatchObject({ outcome: 'busy', detail: 'queue full' });
      expect(running?.outcome).toBe('timeout');
      expect(reads).toBe(2);
      // A document deleted meanwhile: nothing to answer.
      expect(await copies.readableText({ key: 'gone', document: async () => undefined, context: '' })).toBeUndefined();
    } finally {
      await copies.close();
    }
  });

  it('keeps finished texts within its byte bound, least recently used out', async () => {
    const paragraph = (n: number) => `<p>${String(n).repeat(1000)}</p>`;
    const copies = createMarkdownCopies({ cacheBytes: 2600 });
    try {
      for (const n of [1, 2, 3]) await copies.readableText(version(`v${n}`, paragraph(n)));
      const { cacheBytes, cacheEntries, conversions } = copies.stats();
      expect(conversions).toBe(3);
      expect(cacheBytes).toBeLessThanOrEqual(2600);
      expect(cacheEntries).toBe(2);
      // v1 left first: asked again, it is converted again; v3 is still kept.
      await copies.readableText(version('v3', paragraph(3)));
      expect(copies.stats().conversions).toBe(3);
      await copies.readableText(version('v1', paragraph(1)));
      expect(copies.stats().conversions).toBe(4);
      expect(copies.stats().cacheBytes).toBeLessThanOrEqual(2600);
      // A text larger than the whole bound is answered, and not kept.
      const large = await copies.readableText(version('large', paragraph(9).repeat(3)));
      expect(textOf(large)).toHaveLength(3000 + 4);
      expect(copies.stats().cacheEntries).toBe(2);
    } finally {
      await copies.close();
    }
  });

  it('stops the worker when idle and starts another on demand; none before the first use', async () => {
    const { copies, events, next } = watchedCopies({ idleMs: 50 });
    try {
      expect(copies.stats()).toMatchObject({ workerRunning: false, workerStarts: 0 });
      const stopped = next('stopped');
      expect(textOf(await copies.readableText(version('a', '<p>a</p>')))).toBe('a');
      expect(await stopped).toEqual({ kind: 'stopped', reason: 'idle' });
      expect(copies.stats()).toMatchObject({ workerRunning: false, workerStarts: 1 });
      expect(textOf(await copies.readableText(version('b', '<p>b</p>')))).toBe('b');
      expect(copies.stats()).toMatchObject({ workerStarts: 2 });
      expect(events.map((e) => e.kind)).toEqual(['started', 'stopped', 'started']);
    } finally {
      await copies.close();
    }
  });
});

/** The relative modules and the packages a module imports at run time (type-only imports are erased). */
function runtimeImports(file: URL): string[] {
  const source = readFileSync(file, 'utf8');
  const found: string[] = [];
  for (const match of source.matchAll(/^\s*(?:import|export)\s+(?!type\s)(?:[^;'"]*?\sfrom\s+)?['"]([^'"]+)['"]/gm)) {
    found.push(match[1] ?? '');
  }
  for (const match of source.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)) found.push(match[1] ?? '');
  return found;
}

/** Every module the main thread can load from `entry`, following relative imports (`.js` specifiers name `.ts`). */
function mainThreadModules(entry: URL): Set<string> {
  const seen = new Set<string>();
  const stack = [entry];
  for (let file = stack.pop(); file !== undefined; file = stack.pop()) {
    if (seen.has(file.href)) continue;
    seen.add(file.href);
    for (const specifier of runtimeImports(file)) {
      if (specifier.startsWith('.')) stack.push(new URL(specifier.replace(/\.js$/, '.ts'), file));
      else seen.add(`package:${specifier}`);
    }
  }
  return seen;
}

describe('what runs on the event loop', () => {
  // The plain text (domain/plain-text.ts) is also what the search index reads (docs/decisions/0037), made in the body
  // worker or, when that is busy, in-process: only the converter and its libraries are the Markdown worker's alone.
  it('the converter and its libraries are reachable from the worker only', () => {
    const src = new URL('../src/', import.meta.url);
    const main = mainThreadModules(new URL('main.ts', src));
    expect(main.has(new URL('server.ts', src).href)).toBe(true);
    expect(main.has(new URL('serve/markdown-copy.ts', src).href)).toBe(true);
    for (const worker of ['markdown-convert.ts', 'markdown-safety.ts', 'markdown-worker.ts']) {
      expect(main.has(new URL(`serve/${worker}`, src).href), worker).toBe(false);
    }
    for (const library of ['turndown', 'markdown-it']) expect(main.has(`package:${library}`), library).toBe(false);
    const worker = mainThreadModules(new URL('serve/markdown-worker.ts', src));
    expect(worker.has(new URL('domain/plain-text.ts', src).href)).toBe(true);
    expect(worker.has('package:turndown')).toBe(true);
  });
});

describe('GET /p/<slug>.md and Accept: text/markdown', () => {
  let h: Harness;
  let token: string;
  const clock = createTestClock();

  beforeAll(async () => {
    h = await createHarness({ limits: { maxWritesPerMinute: 10_000, maxWritesPerDay: 10_000 }, clock });
    token = await h.token('publisher');
  });
  afterAll(() => h.close());

  async function publish(body: Record<string, unknown> = {}) {
    const reply = await h.call('POST', '/api/drops', {
      token,
      body: { title: 'Q3 report', description: 'Sales by region.', html: REPORT, ...body },
    });
    expect(reply.status, reply.text).toBe(201);
    return reply.json as { slug: string };
  }

  const markdownOf = (url: string, headers: Record<string, string> = {}) =>
    h.call('GET', url, { headers: { accept: 'text/markdown', ...headers } });

  it('starts no converter for building the app, publishing or serving the viewer', async () => {
    const { slug } = await publish();
    expect((await h.call('GET', `/p/${slug}`)).status).toBe(200);
    expect(h.services.readableCopies.stats()).toMatchObject({ workerRunning: false, workerStarts: 0 });
  });

  it('neutralises a hostile document, title, description and context: no raw HTML, no unsafe link', async () => {
    const { slug } = await publish({
      title: '<img src=x onerror=alert(1)> [t](javascript:alert(1))',
      description: '&lt;script&gt; <script>alert(1)</script>\n---\n[d]: javascript:alert(1)',
      html:
        '<h1>&lt;script&gt;alert(1)&lt;/script&gt;</h1><p><a href="java&#x09;script:alert(1)">tab</a> ' +
        '<a href="https://example.com/ok" title=\'x" onmouseover="alert(1)\'>ok</a> &lt;javascript:alert(1)&gt;</p>' +
        '<img src="data:image/svg+xml,&lt;svg onload=alert(1)&gt;" alt="chart"><pre><code>a``` &lt;b&gt;</code></pre>',
      context: 'See <script>alert(1)</script> and [x](JaVaScRiPt:alert(1)) <javascript:alert(1)> `<b>` [ok](/p/x)',
    });
    const reply = await h.call('GET', `/p/${slug}.md`);
    expect(reply.status).toBe(200);
    expect(renderingProblems(reply.text), reply.text).toEqual([]);
    const shown = shownText(reply.text);
    for (const text of ['<img src=x onerror=alert(1)>', '<script>alert(1)</script>', 'tab', 'chart', 'a``` <b>']) {
      expect(shown, reply.text).toContain(text);
    }
    expect(reply.text).toContain('[ok](https://example.com/ok "x\\" onmouseover\\=\\"alert\\(1\\)")');
    expect(reply.text).toContain('[ok](/p/x)');
  });

  it('has concurrent readers of one version share one conversion', async () => {
    const { slug } = await publish({ html: page('shared by all') });
    const before = h.services.readableCopies.stats().conversions;
    const replies = await Promise.all(Array.from({ length: 16 }, () => h.call('GET', `/p/${slug}.md`)));
    expect(new Set(replies.map((r) => r.status))).toEqual(new Set([200]));
    expect(new Set(replies.map((r) => r.text)).size).toBe(1);
    expect(h.services.readableCopies.stats().conversions - before).toBe(1);
  });

  it('answers a pathological document with its plain text, made in the worker (event loop CPU printed)', async () => {
    const { slug } = await publish({ html: PATHOLOGICAL });
    const { textFallbacks } = h.services.readableCopies.stats();
    const started = performance.now();
    let reply: Awaited<ReturnType<typeof h.call>> | undefined;
    const loopCpuMs = await cpuOf(async () => {
      reply = await h.call('GET', `/p/${slug}.md`);
    });
    console.log(
      `pathological 2 MiB document: answered as text in ${(performance.now() - started).toFixed(0)} ms, ` +
        `${loopCpuMs} ms of it on the event loop's CPU`,
    );
    expect(reply?.status).toBe(200);
    expect(reply?.text).toContain('without its structure');
    expect(reply?.text).toContain('x\nx\nx\nx');
    // The text came from the worker (the event loop's share is asserted without HTTP in 'the bounded worker').
    expect(h.services.readableCopies.stats().textFallbacks).toBe(textFallbacks + 1);
  });

  it('answers the title, description, version, the document as Markdown and the context', async () => {
    const { slug } = await publish({ context: 'Reviewed by finance; see the totals table.' });
    const reply = await h.call('GET', `/p/${slug}.md`);
    expect(reply.status, reply.text).toBe(200);
    expect(reply.headers).toMatchObject({
      'content-type': 'text/markdown; charset=utf-8',
      'x-content-type-options': 'nosniff',
      'cache-control': 'no-cache',
    });
    const text = reply.text;
    expect(text.startsWith('# Q3 report\n\nSales by region.\n\n- Version: 1 (the latest)\n')).toBe(true);
    expect(text).toContain('- Published: ');
    expect(text).toContain(`- Viewer: http://drops.test/p/${slug}?v=1`);
    expect(text).toContain('\n# Quarterly report\n');
    expect(text).toContain('\n## Numbers\n');
    expect(text).toContain('| Region | Sales |\n| --- | --- |');
    expect(text).toContain('[method](https://example.com/method)');
    for (const hidden of HIDDEN) expect(text).not.toContain(hidden);
    expect(text.endsWith('## Context\n\nReviewed by finance; see the totals table.\n')).toBe(true);
    expect(text.indexOf('The end.')).toBeLessThan(text.indexOf('## Context'));
  });

  it('negotiates on /p/<slug>: a browser gets the viewer, text/markdown the copy, both with Vary: Accept', async () => {
    const { slug } = await publish();
    const browser = await h.call('GET', `/p/${slug}`, {
      headers: { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' },
    });
    expect(browser.status).toBe(200);
    expect(browser.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(browser.headers.vary).toBe('Accept');
    expect(browser.text).toContain('<iframe');
    const plain = await h.call('GET', `/p/${slug}`);
    expect(plain.headers['content-type']).toBe('text/html; charset=utf-8');
    const agent = await markdownOf(`/p/${slug}`);
    expect(agent.status).toBe(200);
    expect(agent.headers['content-type']).toBe('text/markdown; charset=utf-8');
    expect(agent.headers.vary).toBe('Accept');
    expect(agent.text).toBe((await h.call('GET', `/p/${slug}.md`)).text);
    const head = await h.app.inject({ method: 'HEAD', url: `/p/${slug}.md` });
    expect(head.statusCode).toBe(200);
    expect(head.headers['content-type']).toBe('text/markdown; charset=utf-8');
    expect(head.body).toBe('');
  });

  it('picks the version with ?v=<n>, and refuses a version that does not exist in Markdown', async () => {
    const { slug } = await publish({ html: page('first version'), context: 'v1 context' });
    const put = await h.call('PUT', `/api/drops/${slug}`, { token, body: { html: page('second version') } });
    expect(put.status, put.text).toBe(200);
    const first = await h.call('GET', `/p/${slug}.md?v=1`);
    expect(first.text).toContain('first version');
    expect(first.text).toContain(`- Version: 1 of 2 (not the latest: http://drops.test/p/${slug}.md)`);
    expect(first.text).toContain('## Context\n\nv1 context');
    const latest = await markdownOf(`/p/${slug}`);
    expect(latest.text).toContain('second version');
    expect(latest.text).toContain('- Version: 2 (the latest)');
    expect(latest.text).not.toContain('## Context');
    for (const v of ['3', 'abc', '0']) {
      const missing = await h.call('GET', `/p/${slug}.md?v=${v}`);
      expect(missing.status).toBe(404);
      expect(missing.headers['content-type']).toBe('text/markdown; charset=utf-8');
      expect(missing.text).toContain('The latest is 2');
    }
  });

  it('a locked drop: 401 and no byte of it without a capability, 200 with the owner token or the cookie', async () => {
    const { slug } = await publish({
      passcode: 'letmein',
      title: 'Secret title',
      description: 'Secret description',
      context: 'Secret context',
    });
    const stranger = await h.token('stranger');
    for (const reply of [
      await h.call('GET', `/p/${slug}.md`),
      await markdownOf(`/p/${slug}`),
      await h.call('GET', `/p/${slug}.md?v=1`),
      await h.call('GET', `/p/${slug}.md?v=99`),
      await h.call('GET', `/p/${slug}.md`, { token: stranger }),
      await h.call('GET', `/p/${slug}.md`, { headers: { cookie: 'hd_cap=forged' } }),
    ]) {
      expect(reply.status).toBe(401);
      expect(reply.headers['content-type']).toBe('text/markdown; charset=utf-8');
      expect(reply.headers['cache-control']).toBe('private, no-store');
      for (const secret of ['Secret', 'Quarterly', 'Numbers', SECRET_SCRIPT]) expect(reply.text).not.toContain(secret);
    }
    const owner = await h.call('GET', `/p/${slug}.md`, { token });
    expect(owner.status).toBe(200);
    expect(owner.headers['cache-control']).toBe('private, no-store');
    expect(owner.text).toContain('# Secret title');
    expect(owner.text).toContain('## Context\n\nSecret context');
    const unlock = await h.call('POST', `/p/${slug}/unlock`, {
      rawBody: 'passcode=letmein',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(unlock.status).toBe(303);
    const cookie = String(unlock.headers['set-cookie']).split(';')[0] ?? '';
    expect(cookie).toMatch(/^hd_cap=/);
    const withCookie = await markdownOf(`/p/${slug}`, { cookie });
    expect(withCookie.status).toBe(200);
    expect(withCookie.text).toContain('# Quarterly report');
    expect(withCookie.text).not.toContain(SECRET_SCRIPT);
  });

  it('answers 410 for an expired drop and 404 for an unknown one or a bad slug, in Markdown', async () => {
    const { slug } = await publish({ expires_at: clock.now() + 120_000 });
    expect((await h.call('GET', `/p/${slug}.md`)).status).toBe(200);
    clock.advance(120_000);
    try {
      const gone = await markdownOf(`/p/${slug}`);
      expect(gone.status).toBe(410);
      expect(gone.headers['content-type']).toBe('text/markdown; charset=utf-8');
      expect(gone.text).not.toContain('Quarterly');
    } finally {
      clock.advance(-120_000);
    }
    for (const url of ['/p/nosuchdrop.md', '/p/bad.slug.md', `/p/${'x'.repeat(65)}.md`]) {
      const missing = await h.call('GET', url);
      expect(missing.status, url).toBe(404);
      expect(missing.headers['content-type']).toBe('text/markdown; charset=utf-8');
      expect(missing.text).toContain('# Not found');
    }
    const negotiated = await markdownOf('/p/nosuchdrop');
    expect(negotiated.status).toBe(404);
    expect(negotiated.headers['content-type']).toBe('text/markdown; charset=utf-8');
  });

  it('counts no view: the copy is not a render', async () => {
    const { slug } = await publish();
    await h.call('GET', `/p/${slug}.md`);
    await markdownOf(`/p/${slug}`);
    await h.services.flushCounters();
    const stats = await h.call('GET', `/api/drops/${slug}/stats`, { token });
    expect(stats.json.views).toBe(0);
  });

  it('converts a 2 MiB document within the bound (time printed)', async () => {
    const html = largeReport();
    expect(Buffer.byteLength(html)).toBeLessThanOrEqual(2_097_152);
    const { slug } = await publish({ html });
    const started = performance.now();
    const reply = await h.call('GET', `/p/${slug}.md`);
    const ms = performance.now() - started;
    console.log(
      `readable copy of a ${(html.length / 1_048_576).toFixed(2)} MiB document: ${ms.toFixed(0)} ms ` +
        `(${(reply.text.length / 1_048_576).toFixed(2)} MiB of Markdown)`,
    );
    expect(reply.status).toBe(200);
    expect(reply.text).not.toContain('without its structure');
    expect(reply.text).toContain('## Section 1\n');
    expect(reply.text).toContain('| Name | Value | State |');
    const again = performance.now();
    expect((await h.call('GET', `/p/${slug}.md`)).text).toBe(reply.text);
    console.log(`the same copy again (cached): ${(performance.now() - again).toFixed(0)} ms`);
  });

  it('answers a pathological document with its text past the time bound, serving others meanwhile', async () => {
    const { slug } = await publish({ html: NESTED });
    const other = await publish();
    const order: string[] = [];
    const started = performance.now();
    const slow = h.call('GET', `/p/${slug}.md`).then((reply) => {
      order.push('copy');
      return reply;
    });
    // The conversion runs in the worker: the event loop keeps answering meanwhile.
    const viewer = await h.call('GET', `/p/${other.slug}`);
    order.push('viewer');
    expect(viewer.status).toBe(200);
    const reply = await slow;
    const ms = performance.now() - started;
    console.log(`pathological document (190,000 nested divs): ${ms.toFixed(0)} ms, answered as text`);
    expect(order).toEqual(['viewer', 'copy']);
    expect(reply.status).toBe(200);
    expect(reply.text).toContain('without its structure');
    expect(reply.text).toContain('deep text');
    expect(ms).toBeLessThan(20_000);
    // The fallback is kept for this version: no second wait.
    const again = performance.now();
    expect((await h.call('GET', `/p/${slug}.md`)).text).toBe(reply.text);
    expect(performance.now() - again).toBeLessThan(2000);
    // A fresh worker converts the next document.
    const next = await h.call('GET', `/p/${other.slug}.md`);
    expect(next.text).toContain('| Region | Sales |');
  });
});

describe('a busy converter (GET /p/<slug>.md)', () => {
  let h: Harness;
  let token: string;

  beforeAll(async () => {
    // No conversion may wait behind the one running: a second document is answered 503 at once.
    h = await createHarness({ markdown: { maxQueued: 0, timeoutMs: 300 } });
    token = await h.token('busy');
  });
  afterAll(() => h.close());

  it('answers 503 with Retry-After in Markdown rather than queueing, and serves the same request later', async () => {
    const slugs: string[] = [];
    for (const n of [1, 2]) {
      const reply = await h.call('POST', '/api/drops', { token, body: { title: `deep ${n}`, html: `${NESTED} ${n}` } });
      expect(reply.status, reply.text).toBe(201);
      slugs.push(reply.json.slug);
    }
    const replies = await Promise.all(slugs.map((slug) => h.call('GET', `/p/${slug}.md`)));
    expect(replies.map((r) => r.status).sort()).toEqual([200, 503]);
    const busy = replies.find((r) => r.status === 503);
    expect(busy?.headers).toMatchObject({
      'retry-after': '1',
      'content-type': 'text/markdown; charset=utf-8',
      'cache-control': 'no-store',
    });
    expect(busy?.text).toBe('# Busy\n\nToo many documents are waiting to be converted. Ask again in 1 s.\n');
    const refused = slugs[replies.indexOf(busy as (typeof replies)[number])];
    const later = await h.call('GET', `/p/${refused}.md`);
    expect(later.status).toBe(200);
    expect(later.text).toContain('deep text');
  });
});
