/** Pre-upload checks: what breaks in a standalone document. */
import { describe, expect, it } from 'vitest';
import { assertPublishable, checkHtml, documentTitle, looksLikeHtml, relativeReferences } from '../src/html-checks.js';

const codes = (html: string) => checkHtml(html).map((w) => w.code);

describe('checkHtml', () => {
  it('finds nothing wrong in a complete, self-contained document', () => {
    const html = `<!DOCTYPE html><html><head><title>x</title><link rel="stylesheet" href="https://cdn.example/x.css">
<style>body{background:url(data:image/png;base64,AAAA)}</style></head>
<body><a href="#top">top</a><a href="mailto:a@b.c">mail</a><img src="//cdn.example/i.png"><script>const u = "local.js";</script></body></html>`;
    expect(checkHtml(html)).toEqual([]);
  });

  it('names relative references in src, href, srcset, poster, CSS url() and @import', () => {
    const html = `<!doctype html><html><head><link href="css/site.css" rel="stylesheet"><style>@import "theme.css"; .a{background:url('img/bg.png')}</style></head>
<body><img src=logo.png srcset="small.png 1x, https://x.test/big.png 2x"><video poster="poster.jpg"></video>
<a href="../other.html">next</a><div style="background-image:url(tile.gif)"></div><!-- <img src="commented.png"> --></body></html>`;
    expect(relativeReferences(html).sort()).toEqual(
      [
        '../other.html',
        'css/site.css',
        'img/bg.png',
        'logo.png',
        'poster.jpg',
        'small.png',
        'theme.css',
        'tile.gif',
      ].sort(),
    );
    const warning = checkHtml(html).find((w) => w.code === 'relative_reference');
    expect(warning?.message).toMatch(/^8 relative reference\(s\) will not load/);
  });

  it('ignores relative references when a <base href> makes them absolute', () => {
    expect(relativeReferences('<html><head><base href="https://example.com/"></head><img src="a.png"></html>')).toEqual(
      [],
    );
  });

  it('warns about a missing doctype, a fragment, and a size near the limit', () => {
    expect(codes('<html><body>x</body></html>')).toEqual(['missing_doctype']);
    expect(codes('<p>just a paragraph</p>')).toEqual(['missing_doctype', 'fragment']);
    expect(codes(`\uFEFF<!-- hi --> <!doctype html><html>${'x'.repeat(1_950_000)}</html>`)).toEqual([
      'size_near_limit',
    ]);
  });
});

describe('looksLikeHtml, documentTitle, assertPublishable', () => {
  it('tells HTML from Markdown, JSON and CSV', () => {
    expect(looksLikeHtml('<!doctype html><title>x</title>')).toBe(true);
    expect(looksLikeHtml('  <div class="card">x</div>')).toBe(true);
    expect(looksLikeHtml('# Title\n\nText with <b>bold</b>.')).toBe(false);
    expect(looksLikeHtml('{"html": "<p>x</p>"}')).toBe(false);
    expect(looksLikeHtml('a,b\n1,2\n')).toBe(false);
    expect(looksLikeHtml('')).toBe(false);
  });

  it('reads the <title>', () => {
    expect(documentTitle('<title>\n  Q3 &amp; Q4 &lt;draft&gt;\n</title>')).toBe('Q3 & Q4 <draft>');
    expect(documentTitle('<title> </title>')).toBeUndefined();
    expect(documentTitle('<p>none</p>')).toBeUndefined();
  });

  it('refuses non-HTML unless forced, and anything over 2097152 bytes', () => {
    expect(() => assertPublishable('plain text')).toThrow(expect.objectContaining({ code: 'not_html' }));
    expect(() => assertPublishable('plain text', { force: true })).not.toThrow();
    expect(() => assertPublishable(`<p>${'é'.repeat(1_048_575)}</p>`)).toThrow(
      expect.objectContaining({ code: 'html_too_large', details: { max_bytes: 2_097_152, size_bytes: 2_097_157 } }),
    );
  });
});
