import { toHex, timingSafeEqual } from "../../platform/hash";

async function hmacHex(hash: "SHA-256" | "SHA-512", secret: string, message: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash }, false, ["sign"]);
  const data = new TextEncoder().encode(message);
  return toHex(new Uint8Array(await crypto.subtle.sign("HMAC", key, data)));
}

export const hmacSha256Hex = (secret: string, message: string) => hmacHex("SHA-256", secret, message);
export const hmacSha512Hex = (secret: string, message: string) => hmacHex("SHA-512", secret, message);

/** Constant-time check of a hex signature (case-insensitive); a missing one never matches. */
export async function signatureMatches(expectedHex: string, given: string | undefined | null): Promise<boolean> {
  if (!given) return false;
  return timingSafeEqual(expectedHex, given.trim().toLowerCase());
}

/** Deeper than any notification a provider sends; a body nested further is refused unsigned. */
const MAX_SIGNED_DEPTH = 32;

/**
 * Keys sorted at every depth, as the crypto provider signs its notifications; undefined for a value
 * nested deeper than MAX_SIGNED_DEPTH, so that a hostile body cannot exhaust the stack.
 */
export function sortKeysDeep(value: unknown, depth = 0): unknown {
  if (depth > MAX_SIGNED_DEPTH) return undefined;
  if (Array.isArray(value)) {
    const items = value.map((item) => sortKeysDeep(item, depth + 1));
    return items.includes(undefined) ? undefined : items;
  }
  if (value && typeof value === "object") {
    const entries: [string, unknown][] = [];
    for (const key of Object.keys(value).sort()) {
      const sorted = sortKeysDeep((value as Record<string, unknown>)[key], depth + 1);
      if (sorted === undefined) return undefined;
      entries.push([key, sorted]);
    }
    return Object.fromEntries(entries);
  }
  return value;
}
