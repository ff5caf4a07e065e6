/**
 * What a per-address limit counts: an IPv4 address, or the /64 an IPv6 address belongs to. A /64 is
 * one subscriber's network, in which every host picks addresses at will (privacy addresses), so
 * counting whole IPv6 addresses would give one client as many counters as it cares to use.
 * Takes an address in the one spelling `src/http/client-address.ts` writes (canonicalAddress).
 */
export function addressLimitSubject(address: string): string {
  if (!address.includes(":")) return address;
  const [head = "", tail] = address.split("::");
  const left = head === "" ? [] : head.split(":");
  const right = tail === undefined || tail === "" ? [] : tail.split(":");
  const groups = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill("0"), ...right];
  return `${groups.slice(0, 4).map((g) => parseInt(g, 16).toString(16)).join(":")}::/64`;
}
