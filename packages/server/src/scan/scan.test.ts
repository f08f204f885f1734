/**
 * The scanner's rules (docs/api.md, "A look before publishing"): every kind is found in the html, the context and a
 * file, at the right line; excerpts are masked; validation keeps placeholders, wrong checksums and ordinary numbers
 * out.
 */
import { describe, expect, it } from 'vitest';
import { createRandom, personalCases, SECRET_KINDS } from '../../../../bench/scan-corpus.mjs';
import { newApiToken } from '../domain/ids.js';
import type { Finding, ScanText } from '../domain/scan.js';
import { maskExcerpt } from './mask.js';
import { CARD, ibanValid, luhnValid, PHONE } from './personal-data.js';
import { createScanner } from './scanner.js';

const scanner = createScanner();
const scan = (texts: ScanText[]) => scanner.scan(texts);
const scanHtml = (text: string) => scan([{ where: 'html', text }]);

/** A value as the corpus makes it, as it would be written into a document (with what precedes it). */
function written(make: (rand: () => number) => unknown, seed: number): { text: string; secret: string } {
  const value = make(createRandom(seed)) as string | { prefix: string; secret: string };
  return typeof value === 'string'
    ? { text: value, secret: value }
    : { text: value.prefix + value.secret, secret: value.secret };
}

const lines = (n: number, value: string) => `${'<p>filler</p>\n'.repeat(n - 1)}<pre>${value}</pre>\n<p>end</p>`;

describe('every secret kind', () => {
  for (const [kind, make] of SECRET_KINDS) {
    it(`${kind}: found in the html, the context and a file, at its line, and never answered whole`, async () => {
      const { text, secret } = written(make, kind.length * 31);
      const findings = await scan([
        { where: 'html', text: lines(5, text) },
        { where: 'context', text: lines(2, text) },
        { where: 'files/data/export.csv', text: lines(9, text) },
      ]);
      const at = (where: string) => findings.filter((f) => f.where === where).map((f) => [f.kind, f.line]);
      expect(at('html')).toEqual([['secret', 5]]);
      expect(at('context')).toEqual([['secret', 2]]);
      expect(at('files/data/export.csv')).toEqual([['secret', 9]]);
      expect(JSON.stringify(findings)).not.toContain(secret);
      for (const finding of findings) expect(finding.excerpt.replace(/\*+/g, '').length).toBeLessThanOrEqual(8);
    });
  }
});

describe('personal data', () => {
  for (const c of personalCases()) {
    it(`${c.kind}: found at line ${c.line}`, async () => {
      const findings = await scanHtml(c.html);
      expect(findings.map((f) => [f.kind, f.rule, f.line])).toContainEqual([
        'personal_data',
        `personal/${c.kind}`,
        c.line,
      ]);
    });
  }

  it('Luhn and mod-97 decide, not the shape', () => {
    expect(luhnValid('4111111111111111')).toBe(true);
    expect(luhnValid('4111111111111112')).toBe(false);
    expect(ibanValid('DE89370400440532013000')).toBe(true);
    expect(ibanValid('DE89370400440532013001')).toBe(false);
    expect(ibanValid('DE8937040044053201300')).toBe(false);
  });

  it('a card number that fails Luhn, or a bare one with no card named before it, is no finding', async () => {
    expect(await scanHtml('<p>Card: 4111 1111 1111 1112</p>')).toEqual([]);
    expect(await scanHtml('<p>Order 4111111111111111 shipped</p>')).toEqual([]);
    expect((await scanHtml('<p>Visa 4111111111111111</p>')).map((f) => f.rule)).toEqual(['personal/card-number']);
  });

  it('nine addresses are no list, ten are one finding at the first; role mailboxes do not count', async () => {
    const people = (n: number) => Array.from({ length: n }, (_, i) => `<li>p${i}.doe@mail.example.org</li>`).join('\n');
    const roles = '<li>support@acme.example</li><li>info@acme.example</li>';
    expect(await scanHtml(`<ul>\n${roles}\n${people(9)}</ul>`)).toEqual([]);
    const findings = await scanHtml(`<ul>\n${people(10)}</ul>`);
    expect(findings).toEqual([
      {
        kind: 'personal_data',
        rule: 'personal/email-list',
        where: 'html',
        line: 2,
        excerpt: expect.stringMatching(/\(10 distinct\)$/),
      },
    ]);
  });
});

describe('what is not a secret', () => {
  it('placeholders in connection URLs and keys, and URLs without a password', async () => {
    const samples = [
      'postgres://user:password@localhost:5432/app',
      'postgresql://app:{password}@localhost/app',
      `mysql://root:${'$'}{MYSQL_PASSWORD}@db/shop`,
      'redis://:<password>@cache:6379',
      'https://user@git.example.com/repo.git',
      `sk_live_${'x'.repeat(24)}`,
      'mongodb://localhost:27017/test',
    ];
    for (const sample of samples) expect(await scanHtml(`<pre>${sample}</pre>`), sample).toEqual([]);
  });

  it('an hd_ token is found only with its checksum', async () => {
    const token = newApiToken();
    expect((await scanHtml(`<code>${token}</code>`)).map((f) => f.rule)).toEqual(['htmldrop/htmldrop-token']);
    const broken = `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`;
    expect(await scanHtml(`<code>${broken}</code>`)).toEqual([]);
  });

  it('a secretlint-disable comment does not turn the look off', async () => {
    const key = ['AKIA', 'Z3MSJV4WWNKWW5FG'].join('');
    const findings = await scanHtml(`<!-- secretlint-disable -->\n<p>${key}</p>`);
    expect(findings.map((f: Finding) => [f.rule, f.line])).toEqual([['htmldrop/aws-access-key-id', 2]]);
  });
});

describe('excerpts', () => {
  it('keep at most the first and last 4 characters, and at most a quarter of a short match on each side', () => {
    expect(maskExcerpt('AKIAZ3MSJV4WWNKWW5FG')).toBe('AKIA************W5FG');
    expect(maskExcerpt('abcdefgh')).toBe('ab****gh');
    expect(maskExcerpt('abc')).toBe('***');
    expect(maskExcerpt('x'.repeat(500))).toHaveLength(24);
  });
});

describe('rules looked for at a URL, in any case', () => {
  it('connection strings whose scheme is written in capitals or with jdbc: are found', async () => {
    const texts = [
      'MONGODB+SRV://admin:Zq8xP2wLr5@cluster0.example.net/app',
      'jdbc:mysql://root:Zq8xP2wLr5@db.internal:3306/shop',
      'PostgreSQL://svc:Zq8xP2wLr5@pg.internal/reports',
    ];
    for (const text of texts) {
      const findings = await scanHtml(`<pre>${text}</pre>`);
      // secretlint's rule, not only this service's rule for any scheme (which would find them too).
      expect(
        findings.map((f) => f.rule),
        text,
      ).toContainEqual(expect.stringMatching(/^database-connection-string\//));
    }
  });

  it('a Slack incoming webhook written in capitals is found', async () => {
    const findings = await scanHtml(
      '<a href="HTTPS://HOOKS.SLACK.COM/services/T0A1B2C3D/B0E1F2G3H/Zq8xP2wLr5Kt7Yv9Wn3Mb6Qd">hook</a>',
    );
    expect(findings.map((f) => f.rule)).toContainEqual(expect.stringMatching(/^slack\//));
  });
});

describe('the card and phone patterns, written to be tried only where they can begin', () => {
  // The plain forms they replaced (decision 0043): a look behind first, then the alternatives.
  const PLAIN_CARD =
    /(?<![0-9A-Za-z.,_/-])(?:\d{4}([ -])\d{4}\1\d{4}\1\d{4}(?:\1\d{3})?|\d{4}([ -])\d{6}\2\d{4,5}|\d{13,19})(?![0-9A-Za-z_/-]|[.,]\d)/g;
  const PLAIN_PHONE =
    /(?<![\w+])(?:\+[1-9]\d{0,2}[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d{1,4}(?:[ .-]?\d{2,4}){2,4}|\(\d{3}\) ?\d{3}-\d{4}|\d{3}[-.]\d{3}[-.]\d{4})(?![\w])/g;
  const all = (pattern: RegExp, text: string) => [...text.matchAll(pattern)].map((m) => `${m.index}:${m[0]}`);

  it('match exactly where and what the plain forms match, over random runs of digits and separators', () => {
    const rand = createRandom(3);
    let matched = 0;
    const pieces = [
      '4111',
      '1111',
      '5500',
      '0000',
      '123456',
      '4',
      '12',
      '999',
      ' ',
      '-',
      '.',
      ',',
      '/',
      '_',
      '+',
      '(',
      ')',
      '+1',
      'a',
      'Z',
      '\n',
    ];
    for (let round = 0; round < 4000; round++) {
      const count = 1 + Math.floor(rand() * 24);
      const text = Array.from({ length: count }, () => pieces[Math.floor(rand() * pieces.length)]).join('');
      expect(all(CARD, text), text).toEqual(all(PLAIN_CARD, text));
      expect(all(PHONE, text), text).toEqual(all(PLAIN_PHONE, text));
      if (all(PLAIN_CARD, text).length + all(PLAIN_PHONE, text).length > 0) matched += 1;
    }
    // The texts are not all misses: enough of them hold a card's or a phone's shape.
    expect(matched).toBeGreaterThan(200);
  });
});
