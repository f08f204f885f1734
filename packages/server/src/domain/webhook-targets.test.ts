/** Which addresses a webhook may reach (docs/api.md, "Webhooks"): public unicast only, in every spelling. */
import { describe, expect, it } from 'vitest';
import { isPublicAddress, literalAddress } from './webhook-targets.js';

describe('isPublicAddress', () => {
  it('accepts public IPv4 and IPv6 unicast addresses', () => {
    for (const address of ['93.184.215.14', '8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '2a00:1450:4001:82a::200e']) {
      expect(isPublicAddress(address), address).toBe(true);
    }
  });

  it('refuses loopback, unspecified, private, link-local, CGNAT, metadata, multicast and reserved addresses', () => {
    for (const address of [
      '127.0.0.1',
      '127.255.255.254',
      '0.0.0.0',
      '0.1.2.3',
      '10.1.2.3',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.0.1',
      '169.254.169.254',
      '100.64.0.1',
      '100.127.255.255',
      '224.0.0.1',
      '240.0.0.1',
      '255.255.255.255',
      '198.18.0.1',
      '::',
      '::1',
      '0:0:0:0:0:0:0:1',
      'fe80::1',
      'fc00::1',
      'fd00:ec2::254',
      'ff02::1',
      '2001:db8::1',
    ]) {
      expect(isPublicAddress(address), address).toBe(false);
    }
  });

  it('refuses IPv4-mapped and IPv4-compatible IPv6 in every spelling, and NAT64 and 6to4 forms', () => {
    for (const address of [
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '0:0:0:0:0:ffff:7f00:1',
      '::ffff:8.8.8.8',
      '::127.0.0.1',
      '::7f00:1',
      '64:ff9b::7f00:1',
      '2002:7f00:1::1',
      'fe80::1%eth0',
    ]) {
      expect(isPublicAddress(address), address).toBe(false);
    }
  });

  it('is false for a name, and literalAddress takes brackets off IPv6 only for literals', () => {
    expect(isPublicAddress('example.com')).toBe(false);
    expect(literalAddress('[::1]')).toBe('::1');
    expect(literalAddress('127.0.0.1')).toBe('127.0.0.1');
    expect(literalAddress('hooks.example.com')).toBeUndefined();
    // The URL parser turns numeric IPv4 spellings into dotted form first.
    expect(literalAddress(new URL('https://2130706433/').hostname)).toBe('127.0.0.1');
    expect(literalAddress(new URL('https://0x7f.1/').hostname)).toBe('127.0.0.1');
  });
});
