/**
 * Which addresses a webhook may reach (docs/api.md, "Webhooks"): public ones only. Loopback (also `0.0.0.0` and
 * the unspecified address), private, link-local (which holds the cloud metadata address 169.254.169.254), CGNAT,
 * multicast, reserved and documentation ranges are refused, in IPv4 and IPv6, and every IPv4-mapped or
 * IPv4-compatible IPv6 address. Numeric spellings of IPv4 (`2130706433`, `0x7f.1`) are turned into dotted form by the
 * URL parser before they get here. Checked at registration and again after DNS resolution at each delivery.
 */
import { BlockList, isIP } from 'node:net';

/**
 * Two lists: node's BlockList matches an IPv4 address against IPv4-mapped IPv6 subnets too, so one list holding
 * `::ffff:0:0/96` would refuse every IPv4 address.
 */
const BLOCKED_V4 = (() => {
  const list = new BlockList();
  for (const [network, prefix] of [
    ['0.0.0.0', 8],
    ['10.0.0.0', 8],
    ['100.64.0.0', 10],
    ['127.0.0.0', 8],
    ['169.254.0.0', 16],
    ['172.16.0.0', 12],
    ['192.0.0.0', 24],
    ['192.0.2.0', 24],
    ['192.88.99.0', 24],
    ['192.168.0.0', 16],
    ['198.18.0.0', 15],
    ['198.51.100.0', 24],
    ['203.0.113.0', 24],
    ['224.0.0.0', 4],
    ['240.0.0.0', 4],
  ] as const) {
    list.addSubnet(network, prefix, 'ipv4');
  }
  return list;
})();

const BLOCKED_V6 = (() => {
  const list = new BlockList();
  for (const [network, prefix] of [
    ['64:ff9b::', 96], // NAT64 of any IPv4, private ones included
    ['64:ff9b:1::', 48],
    ['100::', 64], // discard
    ['2001::', 23], // IETF protocol assignments (Teredo, ORCHID, …)
    ['2001:db8::', 32], // documentation
    ['2002::', 16], // 6to4 of any IPv4
    ['fc00::', 7], // unique local (holds fd00:ec2::254, a metadata address)
    ['fe80::', 10], // link-local
    ['fec0::', 10], // site-local (deprecated)
    ['ff00::', 8], // multicast
  ] as const) {
    list.addSubnet(network, prefix, 'ipv6');
  }
  return list;
})();

/**
 * Whether an IPv6 address has its first 80 bits zero: unspecified, loopback, IPv4-compatible and IPv4-mapped (read
 * from the URL parser's canonical form, where those leading zeros are always compressed to a leading `::`).
 */
function isZeroPrefixed(address: string): boolean {
  const canonical = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  return canonical.startsWith('::ffff:') || /^::([0-9a-f]{1,4}(:[0-9a-f]{1,4})?)?$/.test(canonical);
}

/** Whether `address` (an IP literal, without brackets) is a public unicast address a webhook may reach. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !BLOCKED_V4.check(address, 'ipv4');
  if (family !== 6) return false;
  const bare = address.split('%')[0] ?? '';
  if (address.includes('%') || isZeroPrefixed(bare)) return false;
  return !BLOCKED_V6.check(bare, 'ipv6');
}

/** A URL's host as an IP literal (brackets of IPv6 removed), or undefined for a name. */
export function literalAddress(hostname: string): string | undefined {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return isIP(bare) === 0 ? undefined : bare;
}
