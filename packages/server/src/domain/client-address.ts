/**
 * The unit per-address limits count in: an IPv4 address, or the /64 prefix of an IPv6 address (one subscriber's
 * network: a host can pick any of its 2^64 addresses, so counting each alone would give it unlimited tries).
 * IPv4-mapped IPv6 addresses (`::ffff:192.0.2.1`) count as their IPv4 address.
 */
import { isIPv4, isIPv6 } from 'node:net';

/** Expands a valid IPv6 address to its eight 16-bit groups (zone index dropped). */
function ipv6Groups(address: string): number[] {
  let text = address.split('%')[0] ?? '';
  // A trailing dotted IPv4 part (`::ffff:1.2.3.4`) is the last two groups.
  text = text.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_all, a, b, c, d) => {
    const hex = (x: string, y: string) => ((Number(x) << 8) | Number(y)).toString(16);
    return `${hex(a, b)}:${hex(c, d)}`;
  });
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((g) => Number.parseInt(g, 16)));
  const [head = '', tail] = text.split('::');
  const left = parse(head);
  if (tail === undefined) return left;
  const right = parse(tail);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}

/** The key of `address` for per-address limits: the IPv4 address, or `<first four IPv6 groups>::/64`. */
export function clientGroup(address: string): string {
  if (isIPv4(address)) return address;
  if (!isIPv6(address)) return address;
  const groups = ipv6Groups(address);
  const mapped = groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff;
  if (mapped) {
    const [hi = 0, lo = 0] = groups.slice(6);
    return `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}
