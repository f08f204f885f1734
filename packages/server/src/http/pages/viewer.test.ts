import { describe, expect, it } from 'vitest';
import { type GateModel, IFRAME_SANDBOX, renderGate, renderViewer, type ViewerModel } from './viewer.js';

const HOSTILE = '</title><script>alert(1)</script><img src=x onerror=alert(2)>"\'&';

function model(overrides: Partial<ViewerModel> = {}): ViewerModel {
  return {
    slug: 'q3-report',
    title: 'Q3 report',
    description: 'Revenue by region',
    version: 3,
    latestVersion: 3,
    versions: [
      { version: 3, createdAt: Date.UTC(2026, 10, 21, 23, 59) },
      { version: 2, createdAt: Date.UTC(2026, 10, 20) },
      { version: 1, createdAt: Date.UTC(2026, 10, 19) },
    ],
    createdAt: Date.UTC(2026, 10, 21, 23, 59),
    context: null,
    frameSrc: '/p/q3-report/raw?v=3',
    rawUrl: '/p/q3-report/raw?v=3',
    canonicalUrl: 'https://drop.example.com/p/q3-report',
    nonce: 'n0nce-AbC',
    ...overrides,
  };
}

function gate(overrides: Partial<GateModel> = {}): GateModel {
  return { slug: 'q3-report', action: '/p/q3-report/unlock?v=3', error: null, nonce: 'g4te-n0nce', ...overrides };
}

function iframeTag(html: string): string {
  const tag = html.match(/<iframe\b[^>]*>/)?.[0];
  if (tag === undefined) throw new Error('no iframe');
  return tag;
}

function scriptTags(html: string): string[] {
  return html.match(/<script\b[^>]*>/g) ?? [];
}

describe('renderViewer', () => {
  it('sandboxes the drop iframe without allow-same-origin', () => {
    expect(IFRAME_SANDBOX).not.toContain('allow-same-origin');
    const tag = iframeTag(renderViewer(model({ context: 'why' })));
    expect(tag).toContain(`sandbox="${IFRAME_SANDBOX}"`);
    expect(tag).not.toContain('allow-same-origin');
    expect(tag).toContain('referrerpolicy="no-referrer"');
    expect(tag).toContain('loading="eager"');
    expect(tag).toContain('src="/p/q3-report/raw?v=3"');
    expect(tag).toContain('title="Q3 report"');
  });

  it('renders a hostile title, description, context and URLs inert', () => {
    const html = renderViewer(
      model({
        title: HOSTILE,
        description: HOSTILE,
        context: HOSTILE,
        frameSrc: `/p/x/raw?cap="><script>alert(3)</script>`,
        rawUrl: `javascript:"><script>alert(4)</script>`,
        canonicalUrl: `https://drop.example.com/p/x"><script>alert(5)</script>`,
        slug: '"><script>alert(6)</script>',
      }),
    );
    expect(html).not.toContain('<script>alert');
    expect(html).not.toContain('<img');
    expect(html).not.toMatch(/"><script/);
    expect(html).toContain('<title>&lt;/title&gt;&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).toContain('&lt;img src=x onerror=alert(2)&gt;&quot;&#39;&amp;');
    // Exactly one <title> element, one iframe, and only the viewer's own nonce-carrying script.
    expect(html.match(/<title>/g)).toHaveLength(1);
    expect(html.match(/<iframe\b/g)).toHaveLength(1);
    expect(scriptTags(html)).toEqual(['<script nonce="n0nce-AbC">']);
  });

  it('lists every version in the picker, marks the latest and selects the shown one', () => {
    const html = renderViewer(model({ version: 2 }));
    expect(html).toContain('<select id="version-picker" name="v"');
    expect(html).toContain('<label class="sr" for="version-picker">Version</label>');
    expect(html).toMatch(/<form class="ver" method="get" action="\/p\/q3-report">/);
    expect(html).toContain('<noscript><button class="chip" type="submit">');
    const options = [...html.matchAll(/<option value="(\d+)"( selected)?>([^<]*)<\/option>/g)].map((m) => [
      m[1],
      m[2] === ' selected',
      m[3],
    ]);
    expect(options).toEqual([
      ['3', false, 'v3 (latest)'],
      ['2', true, 'v2'],
      ['1', false, 'v1'],
    ]);
  });

  it('shows a plain version label instead of a picker when there is one version', () => {
    const html = renderViewer(
      model({ version: 1, latestVersion: 1, versions: [{ version: 1, createdAt: Date.UTC(2026, 0, 2) }] }),
    );
    expect(html).not.toContain('id="version-picker"');
    expect(html).toContain('>v1</span>');
    // The one script, under the nonce: the page follows the drop live (docs/api.md, "Live pages").
    expect(scriptTags(html)).toEqual(['<script nonce="n0nce-AbC">']);
  });

  it('shows the older-version notice only when the shown version is not the latest', () => {
    const latest = renderViewer(model());
    expect(latest).not.toContain('id="latest-link"');
    expect(latest).not.toContain('id="version-notice"');

    const older = renderViewer(model({ version: 1 }));
    const text = older.replace(/<[^>]+>/g, '');
    expect(text).toContain('You are viewing version 1. The latest is version 3.');
    expect(older).toContain('<a id="latest-link" href="/p/q3-report">');
  });

  it('has the context toggle and panel exactly when the version has context', () => {
    const without = renderViewer(model());
    expect(without).not.toContain('id="context-toggle"');
    expect(without).not.toContain('id="context-panel"');

    const html = renderViewer(model({ context: 'line 1\n  line 2' }));
    const button = html.match(/<button\b[^>]*id="context-toggle"[^>]*>/)?.[0] ?? '';
    expect(button).toContain('aria-expanded="false"');
    expect(button).toContain('aria-controls="context-panel"');
    expect(html).toMatch(/<section\b[^>]*id="context-panel"[^>]*\bhidden\b/);
    expect(html).toContain('<pre tabindex="0">line 1\n  line 2</pre>');
    // Empty context is still a context.
    expect(renderViewer(model({ context: '' }))).toContain('id="context-toggle"');
  });

  it('links to the raw document in a new tab without an opener or referrer', () => {
    const html = renderViewer(model({ rawUrl: '/p/q3-report/raw?v=3&cap=abc' }));
    const link = html.match(/<a\b[^>]*id="raw-link"[^>]*>([^<]*)/);
    expect(link?.[0]).toContain('href="/p/q3-report/raw?v=3&amp;cap=abc"');
    expect(link?.[0]).toContain('target="_blank"');
    expect(link?.[0]).toContain('rel="noopener noreferrer"');
    expect(link?.[1]).toBe('Raw');
  });

  it('carries the page metadata, Open Graph tags and canonical URL', () => {
    const html = renderViewer(model());
    expect(html).toContain('<title>Q3 report · htmldrop</title>');
    expect(html).toContain('<meta name="description" content="Revenue by region">');
    expect(html).toContain('<meta property="og:title" content="Q3 report">');
    expect(html).toContain('<meta property="og:description" content="Revenue by region">');
    expect(html).toContain('<meta property="og:type" content="website">');
    expect(html).toContain('<meta property="og:url" content="https://drop.example.com/p/q3-report">');
    expect(html).toContain('<meta name="twitter:card" content="summary">');
    expect(html).toContain('<link rel="canonical" href="https://drop.example.com/p/q3-report">');
    expect(html).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">');
    expect(html).toContain('<meta name="referrer" content="no-referrer">');
    expect(html).toContain('<meta name="color-scheme" content="light dark">');

    const generic = renderViewer(model({ description: '' }));
    expect(generic).toMatch(/<meta property="og:description" content="[^"]+">/);
    expect(generic).not.toContain('class="desc"');
  });

  it('makes no external request: the only absolute URLs are the canonical ones', () => {
    const html = renderViewer(model({ context: 'ctx', version: 2 }));
    const urls = html.match(/https?:\/\/[^\s"'<>)]*/g) ?? [];
    expect(urls).toEqual(['https://drop.example.com/p/q3-report', 'https://drop.example.com/p/q3-report']);
    expect(html).not.toMatch(/@import|@font-face|url\(/);
    expect(html).not.toMatch(/<script\b[^>]*\bsrc=/);
    expect(html).not.toMatch(/<link\b[^>]*rel="stylesheet"/);
  });

  it('gives every inline script and style the nonce and uses no inline handlers', () => {
    const html = renderViewer(model({ context: 'ctx' }));
    const scripts = scriptTags(html);
    expect(scripts.length).toBeGreaterThan(0);
    for (const tag of scripts) expect(tag).toBe('<script nonce="n0nce-AbC">');
    for (const tag of html.match(/<style\b[^>]*>/g) ?? []) expect(tag).toBe('<style nonce="n0nce-AbC">');
    expect(html).not.toMatch(/\son[a-z]+=/);
    expect(html).not.toMatch(/\sstyle="/);
  });

  it('shows the creation date of the shown version in UTC', () => {
    const html = renderViewer(model({ createdAt: Date.UTC(2026, 10, 21, 23, 59) }));
    expect(html).toContain('<time class="date" datetime="2026-11-21T23:59:00.000Z">2026-11-21</time>');
    expect(renderViewer(model({ createdAt: Number.NaN }))).not.toContain('<time');
  });
});

describe('renderGate', () => {
  it('asks for the passcode with a password form posting to the action', () => {
    const html = renderGate(gate());
    expect(html).toContain('This drop is protected');
    expect(html).toContain('Enter the passcode you were given.');
    expect(html).toContain('<form method="post" action="/p/q3-report/unlock?v=3">');
    const input = html.match(/<input\b[^>]*>/)?.[0] ?? '';
    for (const attr of [
      'type="password"',
      'name="passcode"',
      'id="passcode"',
      'autocomplete="current-password"',
      'required',
      'autofocus',
    ]) {
      expect(input).toContain(attr);
    }
    expect(input).not.toContain('disabled');
    expect(input).not.toContain('value=');
    expect(html).toMatch(/<button type="submit" id="unlock">/);
    expect(html).not.toContain('gate-error');
    expect(html).toContain('<meta name="robots" content="noindex">');
    expect(html).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">');
  });

  it('says a wrong passcode is wrong without echoing anything', () => {
    const html = renderGate(gate({ error: 'wrong' }));
    expect(html).toContain('<p class="err" id="gate-error" role="alert">That passcode is not right.</p>');
    expect(html).not.toMatch(/value=/);
    expect(html.match(/<input\b[^>]*>/)?.[0]).not.toContain('disabled');
  });

  it('disables the form while rate limited and says how long to wait', () => {
    const html = renderGate(gate({ error: 'rate_limited', retryAfterSeconds: 540 }));
    expect(html).toContain('id="gate-error"');
    expect(html).toContain('Too many attempts. Try again in about 9 minutes.');
    expect(html.match(/<input\b[^>]*>/)?.[0]).toContain('disabled');
    expect(renderGate(gate({ error: 'rate_limited', retryAfterSeconds: 20 }))).toContain('about 1 minute.');
    expect(renderGate(gate({ error: 'rate_limited' }))).toContain('Too many attempts.');
  });

  it('escapes the action and makes no external request', () => {
    const html = renderGate(gate({ action: '/p/x/unlock?v=1&a="><script>alert(1)</script>' }));
    expect(html).toContain('action="/p/x/unlock?v=1&amp;a=&quot;&gt;&lt;script&gt;');
    expect(html).not.toContain('<script');
    expect(html).not.toMatch(/https?:\/\//);
    for (const tag of html.match(/<style\b[^>]*>/g) ?? []) expect(tag).toBe('<style nonce="g4te-n0nce">');
  });
});
