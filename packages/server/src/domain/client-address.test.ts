import { describe, expect, it } from 'vitest';
import { clientGroup } from './client-address.js';

describe('clientGroup', () => {
  it.each([
    ['192.0.2.7', '192.0.2.7'],
    ['::ffff:192.0.2.7', '192.0.2.7'],
    ['::ffff:c000:207', '192.0.2.7'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::9', '2001:db8:1:2::/64'],
    ['2001:DB8:0001:0002:ffff::1', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['not an address', 'not an address'],
  ])('%s counts as %s', (address, group) => {
    expect(clientGroup(address)).toBe(group);
  });

  it('every address of one /64 is one client; the next /64 is another', () => {
    const groups = new Set(
      Array.from({ length: 30 }, (_, i) => clientGroup(`2001:db8:aa:bb:${i.toString(16)}::${i + 1}`)),
    );
    expect([...groups]).toEqual(['2001:db8:aa:bb::/64']);
    expect(clientGroup('2001:db8:aa:bc::1')).not.toBe(clientGroup('2001:db8:aa:bb::1'));
  });
});
