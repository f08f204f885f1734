import { describe, expect, it } from 'vitest';
import { createCapabilities, FRAME_TICKET_TTL_MS } from './capability.js';
import { contentOrigins, isContentLabel, newContentLabel } from './content-origin.js';

const label = 'k3x9abcdefghij012345';

describe('content origins', () => {
  it('makes lowercase DNS labels of a fixed shape, never the same twice', () => {
    const labels = new Set(Array.from({ length: 1000 }, () => newContentLabel()));
    expect(labels.size).toBe(1000);
    for (const made of labels) expect(isContentLabel(made)).toBe(true);
  });

  it('finds the label in every spelling of a content host, and in nothing else', () => {
    const local = contentOrigins('http://{id}.localhost:8787');
    expect(local.originOf(label)).toBe(`http://${label}.localhost:8787`);
    for (const host of [
      `${label}.localhost:8787`,
      `${label.toUpperCase()}.LOCALHOST:8787`,
      `${label}.localhost.:8787`,
    ]) {
      expect(local.isContentHost(host), host).toBe(true);
      expect(local.labelOf(host), host).toBe(label);
    }
    const public_ = contentOrigins('https://{id}.example-usercontent.net');
    for (const host of [
      `${label}.example-usercontent.net`,
      `${label}.example-usercontent.net:443`,
      `${label}.example-usercontent.net.`,
    ]) {
      expect(public_.labelOf(host), host).toBe(label);
    }
    // Content-looking hosts with no valid label are content hosts (they reach only the content route's 404).
    for (const host of ['x.localhost:8787', `a.${label}.localhost:8787`, `${label}0.localhost:8787`]) {
      expect(local.isContentHost(host), host).toBe(true);
      expect(local.labelOf(host), host).toBeUndefined();
    }
    for (const host of [
      'localhost:8787',
      `${label}.localhost:8788`,
      `${label}.localhost`,
      '127.0.0.1:8787',
      undefined,
    ]) {
      expect(local.isContentHost(host), String(host)).toBe(false);
      expect(local.labelOf(host), String(host)).toBeUndefined();
    }
    expect(public_.isContentHost(`${label}.example-usercontent.net:80`)).toBe(false);
  });

  it('gives a host the same verdict every time, however many hosts came before (the kept verdicts are bounded)', () => {
    const local = contentOrigins('http://{id}.localhost:8787');
    const hosts = [`${label}.localhost:8787`, 'x.localhost:8787', 'localhost:8787'];
    const first = hosts.map((host) => local.classify(host));
    expect(first).toEqual([label, null, undefined]);
    // More distinct hosts than are kept: the set starts again, and every verdict stays what it was.
    for (let i = 0; i < 10_000; i++) expect(local.classify(`${newContentLabel()}.localhost:8787`)).not.toBeNull();
    for (let round = 0; round < 2; round++) expect(hosts.map((host) => local.classify(host))).toEqual(first);
  });
});

describe('frame tickets', () => {
  it('never outlive the capability lifetime, and are not capabilities', () => {
    const clock = { now: () => 1_000_000 };
    const short = createCapabilities([Buffer.alloc(32, 1)], clock, 60_000);
    const ticket = short.issueTicket('slug', 1);
    expect(ticket.expiresAt - clock.now()).toBe(60_000);
    expect(short.verifyTicket(ticket.token, 'slug', 1)).toBe(true);
    expect(short.verify(ticket.token, 'slug', 1)).toBe(false);
    expect(short.verifyTicket(short.issue('slug', 1).token, 'slug', 1)).toBe(false);
    const long = createCapabilities([Buffer.alloc(32, 1)], clock, 12 * 3_600_000);
    expect(long.issueTicket('slug', 1).expiresAt - clock.now()).toBe(FRAME_TICKET_TTL_MS);
  });
});
