import { EncryptJWT, jwtDecrypt, type JWTPayload } from "jose";
import { isLoopbackHttp } from "./config";

/**
 * The web app's cookies, each a JWE (`dir` + A256GCM) under its own key derived from
 * WEB_COOKIE_SECRET: a cookie cannot be read, altered, or moved into another cookie's place.
 * On https they carry the `__Host-` prefix (Secure, Path=/, no Domain); on loopback http a browser
 * refuses both Secure and the prefix, so there they go without either.
 */
export type CookieKind = "session" | "refresh" | "signin";

export interface CookieSettings {
  secure: boolean;
  names: Record<CookieKind, string>;
}

export function cookieSettings(webOrigin: string): CookieSettings {
  const secure = !isLoopbackHttp(webOrigin);
  const prefix = secure ? "__Host-" : "";
  return { secure, names: { session: `${prefix}session`, refresh: `${prefix}refresh`, signin: `${prefix}signin` } };
}

export type CookieKeys = Record<CookieKind, Uint8Array>;

export async function deriveCookieKeys(secret: string): Promise<CookieKeys> {
  const material = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), "HKDF", false, ["deriveBits"]);
  const derive = async (kind: CookieKind) =>
    new Uint8Array(
      await crypto.subtle.deriveBits({ name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0), info: new TextEncoder().encode(`web-cookie:${kind}`) }, material, 256),
    );
  return { session: await derive("session"), refresh: await derive("refresh"), signin: await derive("signin") };
}

export async function seal(key: Uint8Array, payload: JWTPayload, nowMs: number, ttlSeconds: number): Promise<string> {
  const now = Math.floor(nowMs / 1000);
  return new EncryptJWT(payload).setProtectedHeader({ alg: "dir", enc: "A256GCM" }).setIssuedAt(now).setExpirationTime(now + ttlSeconds).encrypt(key);
}

/** The cookie's payload, or undefined when it is absent, altered, under another key or expired. */
export async function unseal<T extends JWTPayload>(key: Uint8Array, value: string | undefined, nowMs: number): Promise<T | undefined> {
  if (!value || value.length > 4096) return undefined;
  try {
    const { payload } = await jwtDecrypt(value, key, { currentDate: new Date(nowMs), keyManagementAlgorithms: ["dir"], contentEncryptionAlgorithms: ["A256GCM"] });
    return payload as T;
  } catch {
    return undefined;
  }
}

/** A Set-Cookie value: httpOnly, SameSite=Lax, Path=/, Secure off loopback. */
export function cookieHeader(settings: CookieSettings, kind: CookieKind, value: string, maxAgeSeconds: number): string {
  return [`${settings.names[kind]}=${value}`, "Path=/", `Max-Age=${Math.max(0, Math.floor(maxAgeSeconds))}`, "HttpOnly", "SameSite=Lax", ...(settings.secure ? ["Secure"] : [])].join("; ");
}

export function clearCookieHeader(settings: CookieSettings, kind: CookieKind): string {
  return cookieHeader(settings, kind, "", 0);
}
