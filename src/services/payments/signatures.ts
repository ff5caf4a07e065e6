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

/** Keys sorted at every depth, as the crypto provider signs its notifications. */
export function sortKeysDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeysDeep);
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.keys(value as Record<string, unknown>)
        .sort()
        .map((k) => [k, sortKeysDeep((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}
