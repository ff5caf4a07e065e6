import { toHex } from "../../platform/hash";
import type { Random } from "../../platform/ids";
import { hmacSha256Hex, signatureMatches } from "../payments/signatures";

/** A run's callback token: 32 random bytes, hex. Only its HMAC is stored (`tokenHash`). */
export function newCallbackToken(random: Random): string {
  return toHex(random.bytes(32));
}

/**
 * The stored form of a token: HMAC-SHA256 under WORKFLOW_CALLBACK_SECRET, so a copy of the table
 * alone cannot forge a callback.
 */
export function callbackTokenHash(secret: string, token: string): Promise<string> {
  return hmacSha256Hex(secret, `workflow-run-token:${token}`);
}

/** Whether a presented token is the run's, compared in constant time. */
export async function callbackTokenMatches(secret: string, storedHash: string, given: string): Promise<boolean> {
  return signatureMatches(storedHash, await callbackTokenHash(secret, given));
}

/** `X-Workflow-Signature: sha256=<hex HMAC-SHA256 of the raw body>`: the engine-wide alternative to a run's token. */
export async function bodySignatureMatches(secret: string, rawBody: string, header: string): Promise<boolean> {
  const m = /^sha256=([0-9a-fA-F]{64})$/.exec(header.trim());
  if (!m) return false;
  return signatureMatches(await hmacSha256Hex(secret, rawBody), m[1]);
}
