/**
 * Which IP addresses an outbound fetch of admin-supplied URLs may reach: public unicast only.
 * Everything else (loopback, private, link-local, unique-local, multicast, carrier NAT, cloud
 * metadata, documentation and reserved ranges, and IPv6 forms that embed an IPv4 address) is
 * refused.
 */

type Range = [bigint, number];

function v4(text: string): bigint | undefined {
  const parts = text.split(".");
  if (parts.length !== 4) return undefined;
  let value = 0n;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part)) return undefined;
    const n = Number(part);
    if (n > 255) return undefined;
    value = (value << 8n) | BigInt(n);
  }
  return value;
}

function v6(text: string): bigint | undefined {
  let s = text.toLowerCase();
  const zone = s.indexOf("%");
  if (zone >= 0) s = s.slice(0, zone);
  // A trailing dotted IPv4 (::ffff:127.0.0.1) becomes two hextets.
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (dotted) {
    const four = v4(dotted[1]!);
    if (four === undefined) return undefined;
    s = `${s.slice(0, dotted.index)}${((four >> 16n) & 0xffffn).toString(16)}:${(four & 0xffffn).toString(16)}`;
  }
  const halves = s.split("::");
  if (halves.length > 2) return undefined;
  const head = halves[0] ? halves[0].split(":") : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(":") : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill("0"), ...tail];
  let value = 0n;
  for (const g of groups) {
    if (!/^[0-9a-f]{1,4}$/.test(g)) return undefined;
    value = (value << 16n) | BigInt(parseInt(g, 16));
  }
  return value;
}

const cidr4 = (base: string, bits: number): Range => [v4(base)!, bits];
const cidr6 = (base: string, bits: number): Range => [v6(base)!, bits];

const BLOCKED_V4: Range[] = [
  cidr4("0.0.0.0", 8), // "this network"
  cidr4("10.0.0.0", 8),
  cidr4("100.64.0.0", 10), // carrier-grade NAT
  cidr4("127.0.0.0", 8),
  cidr4("169.254.0.0", 16), // link-local, cloud metadata (169.254.169.254)
  cidr4("172.16.0.0", 12),
  cidr4("192.0.0.0", 24),
  cidr4("192.0.2.0", 24),
  cidr4("192.88.99.0", 24),
  cidr4("192.168.0.0", 16),
  cidr4("198.18.0.0", 15),
  cidr4("198.51.100.0", 24),
  cidr4("203.0.113.0", 24),
  cidr4("224.0.0.0", 4), // multicast
  cidr4("240.0.0.0", 4), // reserved, broadcast
];

const BLOCKED_V6: Range[] = [
  cidr6("::", 128),
  cidr6("::1", 128),
  cidr6("100::", 64), // discard
  cidr6("64:ff9b:1::", 48), // local-use NAT64 (RFC 8215): translates to the operator's own networks
  cidr6("2001::", 23), // IETF protocol assignments (Teredo and friends)
  cidr6("2001:db8::", 32), // documentation
  cidr6("fc00::", 7), // unique-local (also fd00:ec2::254, a cloud metadata address)
  cidr6("fe80::", 10), // link-local
  cidr6("fec0::", 10), // old site-local
  cidr6("ff00::", 8), // multicast
];

function inRange(value: bigint, [base, bits]: Range, width: number): boolean {
  const shift = BigInt(width - bits);
  return value >> shift === base >> shift;
}

function blockedV4(value: bigint): boolean {
  return BLOCKED_V4.some((r) => inRange(value, r, 32));
}

/** IPv6 forms that carry an IPv4 address: judged by that address. */
function embeddedV4(value: bigint): bigint | undefined {
  const high96 = value >> 32n;
  const low32 = value & 0xffffffffn;
  if (high96 === 0xffffn) return low32; // ::ffff:a.b.c.d (IPv4-mapped)
  if (high96 === 0n) return low32; // ::a.b.c.d (IPv4-compatible, deprecated)
  if (high96 === 0xffff0000n) return low32; // ::ffff:0:a.b.c.d (IPv4-translated, SIIT)
  if (value >> 32n === 0x0064ff9b0000000000000000n) return low32; // 64:ff9b::/96 NAT64
  if (value >> 112n === 0x2002n) return (value >> 80n) & 0xffffffffn; // 2002::/16 6to4
  return undefined;
}

export type IpVersion = 4 | 6;

/** 4 or 6 for an IP literal (brackets allowed), undefined for a host name. */
export function ipVersion(host: string): IpVersion | undefined {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  if (v4(bare) !== undefined) return 4;
  if (bare.includes(":") && v6(bare) !== undefined) return 6;
  return undefined;
}

/** True when the address may be fetched. Anything that does not parse as an address is refused. */
export function isPublicAddress(address: string): boolean {
  const bare = address.startsWith("[") && address.endsWith("]") ? address.slice(1, -1) : address;
  const four = v4(bare);
  if (four !== undefined) return !blockedV4(four);
  const six = bare.includes(":") ? v6(bare) : undefined;
  if (six === undefined) return false;
  if (BLOCKED_V6.some((r) => inRange(six, r, 128))) return false;
  const inner = embeddedV4(six);
  if (inner !== undefined) return !blockedV4(inner);
  return true;
}
