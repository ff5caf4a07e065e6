/**
 * The caller's network address, for per-address limits. Each entry says where it comes from
 * (deps.clientAddress): Cloudflare's CF-Connecting-IP on Workers; on Node the socket's peer, or,
 * behind TRUSTED_PROXY_HOPS reverse proxies, the X-Forwarded-For entry the outermost of them wrote.
 */

/** Longer than any spelling of an address with a port; anything longer is not one. */
const MAX_ENTRY_LENGTH = 64;
const OCTET = "(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)";
const V4 = new RegExp(`^${OCTET}(?:\\.${OCTET}){3}$`);
const V4_WITH_PORT = new RegExp(`^(${OCTET}(?:\\.${OCTET}){3}):\\d{1,5}$`);
const V6_BRACKETED = /^\[([0-9A-Fa-f:.]+(?:%[\w.-]+)?)\](?::\d{1,5})?$/;

/**
 * One spelling per address, so that a counter is not split by how an address was written:
 * IPv6 lower-cased and compressed (the URL parser's rules), an IPv4-mapped IPv6 address as its
 * IPv4 (a dual-stack socket reports IPv4 peers that way), a port or zone dropped. Null for anything
 * that is not an IP literal: a host name, `unknown`, an obfuscated identifier, junk.
 */
export function canonicalAddress(text: string): string | null {
  const entry = text.trim();
  if (entry === "" || entry.length > MAX_ENTRY_LENGTH) return null;
  if (V4.test(entry)) return entry;
  const v4WithPort = V4_WITH_PORT.exec(entry);
  if (v4WithPort) return v4WithPort[1]!;
  const bare = V6_BRACKETED.exec(entry)?.[1] ?? entry;
  if (!/^[0-9A-Fa-f:.]+(?:%[\w.-]+)?$/.test(bare) || !bare.includes(":")) return null;
  return canonicalV6(bare.replace(/%.*$/, ""));
}

function canonicalV6(address: string): string | null {
  let host: string;
  try {
    host = new URL(`http://[${address}]/`).hostname;
  } catch {
    return null;
  }
  const compressed = host.slice(1, -1);
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(compressed);
  if (!mapped) return compressed;
  const high = parseInt(mapped[1]!, 16);
  const low = parseInt(mapped[2]!, 16);
  return [high >> 8, high & 255, low >> 8, low & 255].join(".");
}

/**
 * The client's address behind `hops` reverse proxies of ours, given the address the connection
 * came from (`peer`) and the request's X-Forwarded-For.
 *
 * Each proxy appends the address it was connected from, so the rightmost `hops` entries are the
 * ones our proxies wrote, and the leftmost of those, written by the outermost proxy, is the client.
 * Anything further left came with the request and is whatever the client chose to send.
 *
 * When the header cannot be what our proxies wrote (absent, fewer entries than hops, or one of
 * those entries not an address), the answer is the peer: the connection did not come through the
 * proxies as configured, and an address taken from the header would then be the client's choice.
 * A peer that is itself not an address answers null (no per-address limit), never a header value.
 */
export function addressBehindProxies(peer: string | null | undefined, forwardedFor: string | null | undefined, hops: number): string | null {
  const direct = peer == null ? null : canonicalAddress(peer);
  if (hops <= 0 || forwardedFor == null) return direct;
  const entries = forwardedFor.split(",");
  if (entries.length < hops) return direct;
  const written = entries.slice(entries.length - hops).map(canonicalAddress);
  if (written.some((address) => address === null)) return direct;
  return written[0]!;
}
