/** `--network` / `network` as people write it: open, none, or origins; malformed origins refused before sending. */
import { describe, expect, it } from 'vitest';
import { dropDetails } from '../src/cli/format.js';
import { HtmlDropError } from '../src/errors.js';
import { checkNetwork, describeNetwork, parseNetwork, sameNetwork } from '../src/network.js';
import type { Drop, NetworkPolicy } from '../src/types.js';

function refusal(text: string): HtmlDropError {
  try {
    parseNetwork(text);
  } catch (error) {
    if (error instanceof HtmlDropError) return error;
    throw error;
  }
  throw new Error(`${text} was accepted`);
}

describe('parseNetwork', () => {
  it('reads open and none, in any case', () => {
    expect(parseNetwork('open')).toBe('open');
    expect(parseNetwork(' NONE ')).toBe('none');
  });

  it('reads origins separated by commas, in canonical form and without repeats', () => {
    expect(parseNetwork('https://cdn.jsdelivr.net,https://unpkg.com')).toEqual([
      'https://cdn.jsdelivr.net',
      'https://unpkg.com',
    ]);
    expect(parseNetwork(' https://CDN.example.com:443 , http://localhost:8080, https://cdn.example.com')).toEqual([
      'https://cdn.example.com',
      'http://localhost:8080',
    ]);
    expect(parseNetwork('http://127.0.0.1:9000,https://[::1]:8443')).toEqual([
      'http://127.0.0.1:9000',
      'https://[::1]:8443',
    ]);
    expect(parseNetwork('https://bücher.example')).toEqual(['https://xn--bcher-kva.example']);
  });

  it('refuses a path, a trailing slash, a query, a user name, another scheme, a wildcard, saying what to write', () => {
    const cases: [string, RegExp][] = [
      ['https://unpkg.com/react', /has no path \(\/react\); write https:\/\/unpkg\.com/],
      ['https://unpkg.com/', /no trailing slash; write https:\/\/unpkg\.com/],
      ['https://unpkg.com?x=1', /no query or fragment; write https:\/\/unpkg\.com/],
      ['https://unpkg.com#top', /no query or fragment/],
      ['https://me:pw@unpkg.com', /no user name or password; write https:\/\/unpkg\.com/],
      ['ftp://files.example.com', /starts with http:\/\/ or https:\/\/ \(/],
      ['cdn.jsdelivr.net', /starts with http:\/\/ or https:\/\/; write https:\/\/cdn\.jsdelivr\.net/],
      ['https://*.example.com', /"\*\.example\.com" is not a host name \(wildcards/],
      ['https://', /not a URL/],
    ];
    for (const [text, pattern] of cases) {
      const error = refusal(text);
      expect(error.code, text).toBe('usage');
      expect(error.message.startsWith(`--network "${text}": `), error.message).toBe(true);
      expect(error.message, text).toMatch(pattern);
      expect(error.message, text).toContain('(expected open, none, or origins separated by commas');
    }
  });

  it('refuses empty entries, open or none inside a list, and more than 10 origins', () => {
    expect(refusal('').message).toMatch(/an empty origin/);
    expect(refusal('https://a.example,,https://b.example').message).toMatch(/an empty origin/);
    expect(refusal('none,https://a.example').message).toMatch(/open and none stand alone/);
    const eleven = Array.from({ length: 11 }, (_, i) => `https://cdn${i}.example`).join(',');
    expect(refusal(eleven).message).toMatch(/at most 10 origins \(got 11\)/);
    expect(parseNetwork(eleven.split(',').slice(0, 10).join(','))).toHaveLength(10);
  });

  it('names the parameter the caller gives', () => {
    expect(() => parseNetwork('https://a.example/x', 'network')).toThrow(/^network "https:\/\/a\.example\/x"/);
  });
});

describe('checkNetwork', () => {
  it('passes open and none, checks and canonicalizes a list, refuses an empty list and a stray word', () => {
    expect(checkNetwork('none')).toBe('none');
    expect(checkNetwork(['https://A.example', 'https://a.example'])).toEqual(['https://a.example']);
    expect(() => checkNetwork([])).toThrow(/^network "": no origins: to allow none, give none/);
    expect(() => checkNetwork(['https://a.example/x'])).toThrow(/^network "https:\/\/a\.example\/x": .*no path/);
    expect(() => checkNetwork('all' as NetworkPolicy)).toThrow(/^network "all": not a policy/);
  });
});

describe('sameNetwork and describeNetwork', () => {
  it('compares words and origin lists regardless of order', () => {
    expect(sameNetwork('open', 'open')).toBe(true);
    expect(sameNetwork('open', 'none')).toBe(false);
    expect(sameNetwork('none', [])).toBe(false);
    expect(sameNetwork(['https://a.example', 'https://b.example'], ['https://b.example', 'https://a.example'])).toBe(
      true,
    );
    expect(sameNetwork(['https://a.example'], ['https://a.example', 'https://b.example'])).toBe(false);
  });

  it('says what a policy allows, for people', () => {
    expect(describeNetwork('open')).toBe('open');
    expect(describeNetwork('none')).toBe('none (no network access)');
    expect(describeNetwork(['https://a.example', 'https://b.example'])).toBe(
      'only https://a.example, https://b.example',
    );
  });
});

describe("show's details", () => {
  const drop: Drop = {
    slug: 'Ab3dE5gH9k',
    title: 'Report',
    description: '',
    url: 'http://localhost:8787/p/Ab3dE5gH9k',
    raw_url: 'http://localhost:8787/p/Ab3dE5gH9k/raw',
    locked: false,
    latest_version: 1,
    view_count: 0,
    comments: 'signed_in',
    metadata: {},
    created_at: 0,
    updated_at: 0,
    expires_at: null,
    content_url: 'http://k3x9q2.localhost:8787/',
    network: ['https://cdn.jsdelivr.net'],
  };

  it('names the own origin after the raw URL when there is one, and the network policy', () => {
    const lines = dropDetails(drop).split('\n');
    expect(lines.slice(2, 4)).toEqual([
      'Raw         http://localhost:8787/p/Ab3dE5gH9k/raw',
      'Own origin  http://k3x9q2.localhost:8787/',
    ]);
    expect(lines).toContain('Network     only https://cdn.jsdelivr.net');
    const without = dropDetails({ ...drop, content_url: null, network: 'open' });
    expect(without).not.toContain('Own origin');
    expect(without).toMatch(/\nNetwork {5}open$/);
  });
});
