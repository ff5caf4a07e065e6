import {
  createLocalJWKSet,
  createRemoteJWKSet,
  customFetch,
  errors as joseErrors,
  jwksCache,
  jwtVerify,
  type ExportedJWKSCache,
  type JSONWebKeySet,
  type JWTPayload,
  type JWTVerifyGetKey,
} from "jose";
import type { KeyValueStore } from "../kv/port";
import type { Clock } from "../platform/clock";
import { sharedLoad, type LoadSlot } from "../platform/shared-load";
import type { Logger } from "../platform/logger";
import { hasUnsafeText } from "../platform/text";

/** Only asymmetric algorithms: an HMAC token "signed" with the issuer's public key must fail. */
export const ALLOWED_ALGORITHMS = ["RS256", "ES256", "EdDSA"];
const CLOCK_TOLERANCE_S = 30;

export interface VerifiedToken {
  subject: string;
  email: string | null;
  roles: string[];
  /** The token's `exp` in milliseconds since the epoch (every accepted token has one). */
  expiresAt: number;
  /**
   * The token's `iat` in milliseconds since the epoch (every accepted token has one): what orders
   * role changes, so that an older token never undoes a newer one (ensure-user.ts).
   */
  issuedAt: number;
}

export interface TokenVerifier {
  readonly issuer: string;
  /** Resolves the token's identity, or rejects with TokenRejected (the reason is for logs only). */
  verify(token: string): Promise<VerifiedToken>;
}

export class TokenRejected extends Error {
  constructor(readonly reason: string) {
    super(`token rejected: ${reason}`);
    this.name = "TokenRejected";
  }
}

/**
 * The issuer's keys could not be had (discovery or the key set unreachable, slow or broken): not
 * the token's fault, so the caller is told to retry (503), not that their credential is bad.
 */
export class IssuerUnavailable extends Error {
  constructor(readonly reason: string) {
    super(`identity provider unavailable: ${reason}`);
    this.name = "IssuerUnavailable";
  }
}

/** Discovery and the key set are each given this long. */
const ISSUER_TIMEOUT_MS = 5_000;
/** Discovery is a store read, at most one fetch and a store write: past this it is abandoned. */
const DISCOVERY_JOIN_MS = ISSUER_TIMEOUT_MS + 5_000;

function readRoles(payload: JWTPayload, claim: string): string[] {
  // Dotted names reach into nested claims, e.g. "realm_access.roles".
  let value: unknown = payload;
  for (const part of claim.split(".")) value = value && typeof value === "object" ? (value as Record<string, unknown>)[part] : undefined;
  return Array.isArray(value) ? value.filter((r): r is string => typeof r === "string") : [];
}

function describeFailure(err: unknown): string {
  if (err instanceof joseErrors.JOSEError) return `${err.code}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}

interface VerifierOptions {
  issuer: string;
  audience: string;
  rolesClaim: string;
  clock: Clock;
  getKey: JWTVerifyGetKey;
  /** Whether the key that signed a remembered token is still published (rotation removes keys). */
  keyIsCurrent: (kid: string | undefined) => boolean;
}

/** Verified tokens remembered at most; a full cache starts over. */
const VERIFIED_CACHE_MAX = 20_000;

function buildVerifier(o: VerifierOptions): TokenVerifier {
  // A client sends the same token on every request until it expires. Checking its signature
  // each time is most of an authenticated request's cost, so a verified token is remembered,
  // keyed by the whole token: any change to it misses the cache and is verified afresh. A
  // signature that checked once checks again for as long as its key is published, so a token is
  // remembered until it expires (re-verifying each minute sent every token of a burst of
  // sign-ins through the signature check again in the same second, a minute later).
  const verified = new Map<string, { result: VerifiedToken; until: number; kid: string | undefined }>();
  return {
    issuer: o.issuer,
    async verify(token) {
      const now = o.clock.now();
      const hit = verified.get(token);
      if (hit) {
        if (hit.until > now && o.keyIsCurrent(hit.kid)) return hit.result;
        verified.delete(token);
      }
      const result = await verifyOnce(o, token);
      if (verified.size >= VERIFIED_CACHE_MAX) verified.clear();
      verified.set(token, { result: result.token, until: result.expiresAt, kid: result.kid });
      return result.token;
    },
  };
}

async function verifyOnce(o: VerifierOptions, token: string): Promise<{ token: VerifiedToken; expiresAt: number; kid: string | undefined }> {
  let payload: JWTPayload;
  let kid: string | undefined;
  try {
    ({ payload, protectedHeader: { kid } } = await jwtVerify(token, o.getKey, {
      issuer: o.issuer,
      audience: o.audience,
      algorithms: ALLOWED_ALGORITHMS,
      clockTolerance: CLOCK_TOLERANCE_S,
      currentDate: new Date(o.clock.now()),
      // RFC 9068 requires iat in a JWT access token; without it the role could not be ordered.
      requiredClaims: ["sub", "exp", "iat"],
    }));
  } catch (err) {
    if (err instanceof IssuerUnavailable) throw err;
    throw new TokenRejected(describeFailure(err));
  }
  if (typeof payload.sub !== "string" || payload.sub.length === 0 || payload.sub.length > 255 || !storable(payload.sub)) throw new TokenRejected("bad sub");
  // An address the database cannot store as it is is no address: the user is known by sub alone.
  const email = typeof payload.email === "string" && payload.email.length <= 320 && storable(payload.email) ? payload.email : null;
  // jwtVerify required exp and iat, and checked that they are numbers.
  const expiresAt = (payload.exp ?? 0) * 1000;
  // Only ever compared with other iat values of the same issuer, so the issuer's clock need not match ours.
  const issuedAt = (payload.iat ?? 0) * 1000;
  return {
    token: { subject: payload.sub, email, roles: readRoles(payload, o.rolesClaim), expiresAt, issuedAt },
    // The cache must not outlive the token.
    expiresAt,
    kid,
  };
}

/**
 * Text the database keeps exactly (see hasUnsafeText: two subjects differing only in a lone
 * surrogate would become one user), and no control characters in an identifier either.
 */
function storable(text: string): boolean {
  return !hasUnsafeText(text) && !/[\u0000-\u001f\u007f]/.test(text);
}

/** A verifier over a fixed key set: the development issuer, whose public key we hold ourselves. */
export function createLocalVerifier(o: Omit<VerifierOptions, "getKey" | "keyIsCurrent"> & { jwks: JSONWebKeySet }): TokenVerifier {
  return buildVerifier({ ...o, getKey: createLocalJWKSet(o.jwks), keyIsCurrent: () => true });
}

interface DiscoveryDocument {
  issuer: string;
  jwks_uri: string;
}

/**
 * A verifier for an OpenID Connect issuer. The JWKS URL comes from the discovery document; the
 * key set lives in the key-value store too, so Worker isolates starting cold reuse it instead
 * of refetching. jose refetches on an unknown `kid` at most once per cooldown (30 s).
 */
export function createOidcVerifier(o: {
  issuer: string;
  audience: string;
  rolesClaim: string;
  clock: Clock;
  fetch: typeof fetch;
  kv: KeyValueStore;
  logger: Logger;
}): TokenVerifier {
  // `iss` must match the configured issuer exactly; only the discovery URL drops a trailing slash.
  const issuer = o.issuer.replace(/\/+$/, "");
  const cacheKey = `oidc:jwks:${issuer}`;
  const discoveryKey = `oidc:discovery:${issuer}`;
  const fetchImpl = (url: string, init: RequestInit) => o.fetch(url, init);
  let liveCache: ExportedJWKSCache | Record<string, never> | undefined;
  let kids = new Set<string | undefined>();
  let kidsUat: number | undefined;
  const resolver: LoadSlot<{ getKey: ReturnType<typeof createRemoteJWKSet>; cache: ExportedJWKSCache | Record<string, never> }> = {};

  async function discover(): Promise<string> {
    const cached = await o.kv.get(discoveryKey).catch(() => null);
    if (cached) return cached;
    const res = await o.fetch(`${issuer}/.well-known/openid-configuration`, { headers: { accept: "application/json" }, signal: AbortSignal.timeout(ISSUER_TIMEOUT_MS) });
    if (!res.ok) throw new Error(`discovery answered ${res.status}`);
    const doc = (await res.json()) as DiscoveryDocument;
    if (typeof doc.jwks_uri !== "string") throw new Error("discovery document has no jwks_uri");
    await o.kv.set(discoveryKey, doc.jwks_uri, { ttlMs: 3_600_000 }).catch(() => false);
    return doc.jwks_uri;
  }

  async function init() {
    const jwksUri = await discover();
    const stored = await o.kv.get(cacheKey).catch(() => null);
    const cache = stored ? (JSON.parse(stored) as ExportedJWKSCache) : ({} as Record<string, never>);
    const getKey = createRemoteJWKSet(new URL(jwksUri), {
      [jwksCache]: cache,
      [customFetch]: fetchImpl,
      cooldownDuration: 30_000,
      cacheMaxAge: 600_000,
      timeoutDuration: ISSUER_TIMEOUT_MS,
    });
    return { getKey, cache };
  }

  async function getKey(...args: Parameters<JWTVerifyGetKey>) {
    // Shared by the instance's requests, but never awaited past the issuer's own time limits: on
    // Workers a discovery begun by a request that was then cancelled would never settle.
    const { getKey: remote, cache } = await sharedLoad(
      resolver,
      () =>
        init().catch((err: unknown) => {
          throw new IssuerUnavailable(`discovery failed: ${describeFailure(err)}`);
        }),
      { joinMs: DISCOVERY_JOIN_MS, keep: true },
    );
    liveCache = cache;
    const before = "uat" in cache ? cache.uat : undefined;
    try {
      return await remote(args[0], args[1] as never);
    } catch (err) {
      // No key for the token's kid (or several) is the token's problem; anything else is the issuer's.
      if (err instanceof joseErrors.JWKSNoMatchingKey || err instanceof joseErrors.JWKSMultipleMatchingKeys) throw err;
      throw new IssuerUnavailable(`key set: ${describeFailure(err)}`);
    } finally {
      // jose updated the shared cache object in place after a fetch: persist it for other isolates.
      if ("uat" in cache && cache.uat !== before) {
        await o.kv.set(cacheKey, JSON.stringify({ jwks: cache.jwks, uat: cache.uat }), { ttlMs: 600_000 }).catch((err: unknown) => {
          o.logger.warn("could not store the JWKS cache", { err: String(err) });
        });
      }
    }
  }

  // jose refreshes the cache object in place; the kid set is rebuilt only when it did.
  const keyIsCurrent = (kid: string | undefined) => {
    if (!liveCache || !("uat" in liveCache)) return false;
    if (liveCache.uat !== kidsUat) {
      kids = new Set(liveCache.jwks.keys.map((k) => k.kid));
      kidsUat = liveCache.uat;
    }
    return kids.has(kid);
  };
  return buildVerifier({ issuer: o.issuer, audience: o.audience, rolesClaim: o.rolesClaim, clock: o.clock, getKey: getKey as JWTVerifyGetKey, keyIsCurrent });
}
