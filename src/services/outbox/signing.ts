import type { Random } from "../../platform/ids";

/** The Standard Webhooks secret prefix; the rest is base64 of the key bytes. */
const SECRET_PREFIX = "whsec_";

export function toBase64(bytes: Uint8Array): string {
  let text = "";
  for (const b of bytes) text += String.fromCharCode(b);
  return btoa(text);
}

function fromBase64(text: string): Uint8Array<ArrayBuffer> {
  const raw = atob(text);
  const out = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
  return out;
}

/** A new signing secret: `whsec_` and base64 of 32 random bytes. */
export function newWebhookSecret(random: Random): string {
  return SECRET_PREFIX + toBase64(random.bytes(32));
}

/** One signature, `v1,<base64 HMAC-SHA256 of id.timestamp.body>`, as the specification defines it. */
export async function signature(secret: string, id: string, timestampSeconds: number, body: string): Promise<string> {
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error("a webhook secret without its prefix");
  const key = await crypto.subtle.importKey("raw", fromBase64(secret.slice(SECRET_PREFIX.length)), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${id}.${timestampSeconds}.${body}`));
  return `v1,${toBase64(new Uint8Array(mac))}`;
}

/**
 * The `webhook-signature` header: one signature per live secret, space-separated, so a receiver
 * still holding the previous secret verifies during the overlap after a rotation.
 */
export async function signatureHeader(secrets: readonly string[], id: string, timestampSeconds: number, body: string): Promise<string> {
  const parts = await Promise.all(secrets.map((s) => signature(s, id, timestampSeconds, body)));
  return parts.join(" ");
}
