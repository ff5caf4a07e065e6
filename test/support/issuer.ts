import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey, type JWK } from "jose";
import { randomSuffix } from "./services";

export const TEST_AUDIENCE = "platform-api-test";

interface SigningKey {
  kid: string;
  alg: "RS256" | "ES256" | "EdDSA";
  privateKey: CryptoKey;
  publicJwk: JWK;
}

export interface SignOptions {
  alg?: SigningKey["alg"];
  kid?: string;
  key?: CryptoKey;
  issuer?: string;
  audience?: string;
  expiresIn?: string | number;
  notBefore?: string | number;
  typ?: string;
  /** The `iat` in seconds since the epoch (default now); null leaves the claim out. */
  issuedAt?: number | null;
}

export interface TestIssuer {
  url: string;
  audience: string;
  /** How often each document was fetched; tests use it to prove caching. */
  fetches: { discovery: number; jwks: number };
  sign(claims: Record<string, unknown>, options?: SignOptions): Promise<string>;
  /** Replaces the signing keys: tokens of the old keys stop verifying once the JWKS is refetched. */
  rotate(): Promise<void>;
  publicJwks(): JWK[];
  /**
   * A current signing key as a private JWK (with its kid and alg), for tests that sign inside
   * another runtime (workerd), where this process's key objects cannot go.
   */
  privateJwk(alg?: SigningKey["alg"]): Promise<JWK>;
  close(): Promise<void>;
}

async function makeKey(alg: SigningKey["alg"]): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true, ...(alg === "EdDSA" ? { crv: "Ed25519" } : {}) });
  const kid = `${alg.toLowerCase()}-${randomSuffix()}`;
  return { kid, alg, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: "sig" } };
}

async function makeKeySet(): Promise<SigningKey[]> {
  return Promise.all((["RS256", "ES256", "EdDSA"] as const).map(makeKey));
}

/**
 * A loopback OpenID Connect issuer speaking the two documents a resource server reads: the
 * discovery document and the JWKS. Tokens are signed with the same keys it publishes.
 */
export async function startTestIssuer(): Promise<TestIssuer> {
  let keys = await makeKeySet();
  const fetches = { discovery: 0, jwks: 0 };
  let base = "";
  const server: Server = createServer((req, res) => {
    if (req.url === "/.well-known/openid-configuration") {
      fetches.discovery += 1;
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ issuer: base, jwks_uri: `${base}/jwks`, id_token_signing_alg_values_supported: ["RS256", "ES256", "EdDSA"] }));
    } else if (req.url === "/jwks") {
      fetches.jwks += 1;
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ keys: keys.map((k) => k.publicJwk) }));
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url: base,
    audience: TEST_AUDIENCE,
    fetches,
    async sign(claims, o = {}) {
      const alg = o.alg ?? "RS256";
      const key = keys.find((k) => k.alg === alg) as SigningKey;
      const jwt = new SignJWT(claims)
        .setProtectedHeader({ alg, kid: o.kid ?? key.kid, typ: o.typ ?? "at+jwt" })
        .setIssuer(o.issuer ?? base)
        .setAudience(o.audience ?? TEST_AUDIENCE)
        .setExpirationTime(o.expiresIn ?? "10m");
      if (o.issuedAt !== null) jwt.setIssuedAt(o.issuedAt);
      if (o.notBefore !== undefined) jwt.setNotBefore(o.notBefore);
      return jwt.sign(o.key ?? key.privateKey);
    },
    async rotate() {
      keys = await makeKeySet();
    },
    publicJwks: () => keys.map((k) => k.publicJwk),
    async privateJwk(alg = "ES256") {
      const key = keys.find((k) => k.alg === alg) as SigningKey;
      return { ...(await exportJWK(key.privateKey)), kid: key.kid, alg };
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
