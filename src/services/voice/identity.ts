import { SignJWT } from "jose";
import type { Principal } from "../../auth/principal";

export const IDENTITY_HEADER = "X-Voice-Identity";
export const IDENTITY_ISSUER = "platform-api";
export const IDENTITY_AUDIENCE = "voice-runtime";
/** Long enough for clock skew between hosts, short enough that a leaked token is soon useless. */
export const IDENTITY_TTL_SECONDS = 60;

export interface IdentityClaims {
  userId: string;
  role: Principal["role"];
  /** The runtime path the token was made for, so it cannot be replayed against another one. */
  path: string;
  method: string;
  /**
   * A fresh id of ours for this token (`jti`). Not the request id: a client chooses its own
   * X-Request-Id, and two tokens with one jti would make a runtime that refuses replays refuse
   * the client's second call.
   */
  tokenId: string;
  nowMs: number;
}

/**
 * A short-lived HS256 token the voice runtime verifies with the shared secret: who is calling,
 * for which runtime path, and a unique id (`jti`) it may use to refuse replays.
 * The audio is streamed, so the body itself is not signed; TLS between the hosts covers it.
 */
export async function signIdentity(secret: string, claims: IdentityClaims): Promise<string> {
  const iat = Math.floor(claims.nowMs / 1000);
  return new SignJWT({ role: claims.role, htm: claims.method, htp: claims.path })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setIssuer(IDENTITY_ISSUER)
    .setAudience(IDENTITY_AUDIENCE)
    .setSubject(claims.userId)
    .setJti(claims.tokenId)
    .setIssuedAt(iat)
    .setExpirationTime(iat + IDENTITY_TTL_SECONDS)
    .sign(new TextEncoder().encode(secret));
}
