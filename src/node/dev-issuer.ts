import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { SignJWT, decodeJwt, exportJWK, generateKeyPair, importJWK, type JWK } from "jose";
import type { Config } from "../config";
import { createLocalVerifier, type TokenVerifier } from "../auth/tokens";
import type { Clock } from "../platform/clock";

/**
 * Local development without an identity provider: a signing key kept under DATA_DIR and tokens
 * printed by `npm run token`. Only the Node server outside production may use it; the Workers
 * entry never imports this file.
 */
export const DEV_ISSUER = "urn:platform:dev-issuer";
export const DEV_AUDIENCE_DEFAULT = "platform-api";
const ALG = "ES256";

export class DevIssuerRefused extends Error {}

export function assertDevIssuerAllowed(config: Config): void {
  if (config.NODE_ENV === "production") throw new DevIssuerRefused("the development issuer is never used with NODE_ENV=production");
  if (config.OIDC_ISSUER) throw new DevIssuerRefused("OIDC_ISSUER is set; the development issuer is off");
}

interface StoredKey {
  kid: string;
  privateJwk: JWK;
  publicJwk: JWK;
}

function keyPath(config: Config): string {
  return resolve(config.DATA_DIR, "dev-issuer-key.json");
}

export async function loadOrCreateKey(config: Config): Promise<StoredKey> {
  const path = keyPath(config);
  if (existsSync(path)) return JSON.parse(readFileSync(path, "utf8")) as StoredKey;
  const { privateKey, publicKey } = await generateKeyPair(ALG, { extractable: true });
  const kid = `dev-${Date.now().toString(36)}`;
  const stored: StoredKey = {
    kid,
    privateJwk: { ...(await exportJWK(privateKey)), kid, alg: ALG },
    publicJwk: { ...(await exportJWK(publicKey)), kid, alg: ALG, use: "sig" },
  };
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, JSON.stringify(stored), { mode: 0o600 });
  chmodSync(path, 0o600);
  return stored;
}

export function devAudience(config: Config): string {
  return config.OIDC_AUDIENCE ?? DEV_AUDIENCE_DEFAULT;
}

/**
 * Trusts the development key under either issuer name: `npm run token`'s and the development
 * sign-in's (an OpenID issuer needs a URL; see dev-sign-in.ts). The token's `iss` picks the
 * verifier, which then checks it like any other.
 */
export async function createDevVerifier(config: Config, clock: Clock, signInIssuer?: string): Promise<TokenVerifier> {
  assertDevIssuerAllowed(config);
  const key = await loadOrCreateKey(config);
  const forIssuer = (issuer: string) => createLocalVerifier({ issuer, audience: devAudience(config), rolesClaim: config.OIDC_ROLES_CLAIM, clock, jwks: { keys: [key.publicJwk] } });
  const cli = forIssuer(DEV_ISSUER);
  if (!signInIssuer) return cli;
  const signIn = forIssuer(signInIssuer);
  return {
    issuer: DEV_ISSUER,
    verify(token) {
      let iss: unknown;
      try {
        iss = decodeJwt(token).iss;
      } catch {
        // Not a JWT: the verifier below rejects it with its reason.
      }
      return (iss === signInIssuer ? signIn : cli).verify(token);
    },
  };
}

export async function signDevToken(config: Config, input: { userId: string; admin: boolean; email?: string; ttlSeconds?: number }): Promise<string> {
  assertDevIssuerAllowed(config);
  const key = await loadOrCreateKey(config);
  const roles = input.admin ? ["admin"] : [];
  const claims: Record<string, unknown> = { email: input.email ?? `${input.userId}@dev.local` };
  // The roles claim may be dotted ("realm_access.roles"): build the nesting it names.
  const path = config.OIDC_ROLES_CLAIM.split(".");
  let target = claims;
  for (const part of path.slice(0, -1)) target = (target[part] = {}) as Record<string, unknown>;
  target[path[path.length - 1] as string] = roles;
  return new SignJWT(claims)
    .setProtectedHeader({ alg: ALG, kid: key.kid, typ: "at+jwt" })
    .setIssuer(DEV_ISSUER)
    .setAudience(devAudience(config))
    .setSubject(input.userId)
    .setIssuedAt()
    .setExpirationTime(`${input.ttlSeconds ?? 86_400}s`)
    .sign(await importJWK(key.privateJwk, ALG));
}
