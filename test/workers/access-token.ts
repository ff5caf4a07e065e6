import { SignJWT, importJWK, type JWK } from "jose";
import { inject } from "vitest";

let signingKey: Promise<CryptoKey> | undefined;

/** An access token from the test issuer of the global setup, for a new subject, valid 10 minutes. */
export async function accessToken(sub: string, roles: readonly string[] = []): Promise<string> {
  const jwk = JSON.parse(inject("issuerSigningJwk")) as JWK & { kid: string; alg: string };
  signingKey ??= importJWK(jwk, jwk.alg) as Promise<CryptoKey>;
  return new SignJWT({ sub, email: `${sub}@example.test`, roles: [...roles] })
    .setProtectedHeader({ alg: jwk.alg, kid: jwk.kid, typ: "at+jwt" })
    .setIssuer(inject("issuerUrl"))
    .setAudience(inject("issuerAudience"))
    .setIssuedAt()
    .setExpirationTime("10m")
    .sign(await signingKey);
}
