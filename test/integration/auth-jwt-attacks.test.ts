import { count } from "drizzle-orm";
import { SignJWT, exportSPKI, generateKeyPair, importJWK, type JWK } from "jose";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { users } from "../../src/db/schema";
import { buildTestApp, fixedClock, type TestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { startTestIssuer, type TestIssuer } from "../support/issuer";
import { randomSuffix } from "../support/services";

/**
 * What an attacker can put in `Authorization` and what the API must answer: every forged,
 * stale or misdirected token is a 401 with the one generic message, and the precise reason is
 * only in the log. Then the key-set mechanics: rotation without a restart, and a JWKS endpoint
 * that a flood of unknown key ids cannot turn the API into a hammer against.
 */

const env = useTestEnvironment();
let t: TestApp;

beforeAll(() => {
  t = buildTestApp({ database: env.db.database, issuer: env.issuer });
});
afterEach(() => {
  vi.useRealTimers();
});

const newSub = () => `user-${randomSuffix()}${randomSuffix()}`;
const nowS = () => Math.floor(Date.now() / 1000);
const b64json = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
const jwkOf = (alg: string, from: TestIssuer = env.issuer) => from.publicJwks().find((k) => k.alg === alg) as JWK;

const userCount = async () => (await env.db.database.db.select({ n: count() }).from(users))[0]?.n;

const authTest = (app: TestApp, authorization?: string) =>
  app.request("/v1/auth/test", authorization === undefined ? {} : { headers: { authorization } });

async function expectUnauthorized(res: Response, message = "invalid or missing key"): Promise<string> {
  expect(res.status).toBe(401);
  expect(res.headers.get("www-authenticate")).toMatch(/^Bearer /);
  const body = (await res.json()) as Record<string, unknown>;
  expect(body).toEqual({ error: "unauthorized", message, code: 401, requestId: expect.stringMatching(/^req_/) });
  return body.requestId as string;
}

function rejectionLogged(app: TestApp, requestId: string): Record<string, unknown> | undefined {
  return app.logs.find((l) => l.msg === "token rejected" && l.requestId === requestId);
}

async function expectOk(app: TestApp, token: string, sub?: string): Promise<void> {
  const res = await authTest(app, `Bearer ${token}`);
  expect(res.status).toBe(200);
  const body = (await res.json()) as { success: boolean; user: { id: string; email: string; role: string } };
  expect(body.success).toBe(true);
  expect(body.user.id).toMatch(/^usr_/);
  if (sub) expect(body.user.email).toBe(`${sub}@example.test`);
}

describe("forged, stale and misdirected tokens", () => {
  const attacks: [label: string, reason: RegExp, forge: () => Promise<string>][] = [
    [
      "alg none (unsigned)",
      /ERR_JOSE_ALG_NOT_ALLOWED/,
      async () => {
        const now = nowS();
        return `${b64json({ alg: "none", typ: "at+jwt" })}.${b64json({ sub: newSub(), iss: env.issuer.url, aud: env.issuer.audience, iat: now, exp: now + 600 })}.`;
      },
    ],
    [
      "alg None with a kid (unsigned, odd casing)",
      /ERR_JOSE_ALG_NOT_ALLOWED/,
      async () => {
        const now = nowS();
        return `${b64json({ alg: "None", kid: jwkOf("RS256").kid })}.${b64json({ sub: newSub(), iss: env.issuer.url, aud: env.issuer.audience, iat: now, exp: now + 600 })}.`;
      },
    ],
    [
      "HS256 with the issuer's RSA public JWK as the HMAC secret",
      /ERR_JOSE_ALG_NOT_ALLOWED/,
      async () => {
        const jwk = jwkOf("RS256");
        return new SignJWT({ sub: newSub() })
          .setProtectedHeader({ alg: "HS256", kid: jwk.kid, typ: "at+jwt" })
          .setIssuer(env.issuer.url)
          .setAudience(env.issuer.audience)
          .setIssuedAt()
          .setExpirationTime("10m")
          .sign(new TextEncoder().encode(JSON.stringify(jwk)));
      },
    ],
    [
      "HS256 with the issuer's RSA public key PEM as the HMAC secret",
      /ERR_JOSE_ALG_NOT_ALLOWED/,
      async () => {
        const jwk = jwkOf("RS256");
        const pem = await exportSPKI((await importJWK(jwk, "RS256", { extractable: true })) as CryptoKey);
        return new SignJWT({ sub: newSub() })
          .setProtectedHeader({ alg: "HS256", kid: jwk.kid })
          .setIssuer(env.issuer.url)
          .setAudience(env.issuer.audience)
          .setIssuedAt()
          .setExpirationTime("10m")
          .sign(new TextEncoder().encode(pem));
      },
    ],
    ["expired 31 s ago (just beyond the 30 s tolerance)", /ERR_JWT_EXPIRED/, () => env.issuer.sign({ sub: newSub() }, { expiresIn: nowS() - 31 })],
    ["expired an hour ago", /ERR_JWT_EXPIRED/, () => env.issuer.sign({ sub: newSub() }, { expiresIn: nowS() - 3600 })],
    ["nbf 60 s in the future (beyond tolerance)", /"nbf"/, () => env.issuer.sign({ sub: newSub() }, { notBefore: nowS() + 60 })],
    ["another issuer", /"iss"/, () => env.issuer.sign({ sub: newSub() }, { issuer: "https://evil.example" })],
    ["the issuer with a trailing slash (iss must match exactly)", /"iss"/, () => env.issuer.sign({ sub: newSub() }, { issuer: `${env.issuer.url}/` })],
    ["another audience", /"aud"/, () => env.issuer.sign({ sub: newSub() }, { audience: "some-other-api" })],
    ["an unknown kid", /ERR_JWKS_NO_MATCHING_KEY/, () => env.issuer.sign({ sub: newSub() }, { kid: `ghost-${randomSuffix()}` })],
    [
      "the kid of a published key of another type (RS256 signature, EC kid)",
      /ERR_JWKS_NO_MATCHING_KEY/,
      () => env.issuer.sign({ sub: newSub() }, { alg: "RS256", kid: jwkOf("ES256").kid }),
    ],
    [
      "a key the issuer does not publish, with the real kid",
      /ERR_JWS_SIGNATURE_VERIFICATION_FAILED/,
      async () => {
        const { privateKey } = await generateKeyPair("RS256");
        return env.issuer.sign({ sub: newSub() }, { alg: "RS256", kid: jwkOf("RS256").kid, key: privateKey });
      },
    ],
    [
      "a tampered payload (sub changed, signature kept)",
      /ERR_JWS_SIGNATURE_VERIFICATION_FAILED/,
      async () => {
        const [header, payload, signature] = (await env.issuer.sign({ sub: newSub() })).split(".") as [string, string, string];
        const claims = JSON.parse(Buffer.from(payload, "base64url").toString()) as Record<string, unknown>;
        return `${header}.${b64json({ ...claims, sub: newSub() })}.${signature}`;
      },
    ],
    [
      "a tampered payload (roles raised to admin, signature kept)",
      /ERR_JWS_SIGNATURE_VERIFICATION_FAILED/,
      async () => {
        const [header, payload, signature] = (await env.issuer.sign({ sub: newSub(), roles: [] })).split(".") as [string, string, string];
        const claims = JSON.parse(Buffer.from(payload, "base64url").toString()) as Record<string, unknown>;
        return `${header}.${b64json({ ...claims, roles: ["admin"] })}.${signature}`;
      },
    ],
    [
      "a stripped signature",
      /ERR_JWS_SIGNATURE_VERIFICATION_FAILED/,
      async () => `${(await env.issuer.sign({ sub: newSub() })).split(".").slice(0, 2).join(".")}.`,
    ],
    ["a token without sub", /"sub"/, () => env.issuer.sign({ email: "nobody@example.test" })],
    ["a sub longer than 255 characters", /bad sub/, () => env.issuer.sign({ sub: "x".repeat(256) })],
    // The database cannot keep these as they are: a NUL fails the insert, a lone surrogate becomes U+FFFD.
    ["a sub with a NUL", /bad sub/, () => env.issuer.sign({ sub: `${newSub()}\u0000admin` })],
    ["a sub with a lone surrogate", /bad sub/, () => env.issuer.sign({ sub: `${newSub()}\ud800` })],
    ["not a JWT at all", /ERR_JWS_INVALID|ERR_JWT_INVALID/, async () => "not-a.jwt"],
  ];

  it.each(attacks)("%s → 401 invalid or missing key, reason only in the log", async (_label, reason, forge) => {
    const token = await forge();
    const usersBefore = await userCount();
    const requestId = await expectUnauthorized(await authTest(t, `Bearer ${token}`));
    const logged = rejectionLogged(t, requestId);
    expect(logged).toMatchObject({ level: "info", msg: "token rejected", requestId });
    expect(String(logged?.reason)).toMatch(reason);
    // The token never reaches the log line, and no user row was created for it.
    expect(JSON.stringify(logged)).not.toContain(token);
    expect(await userCount()).toBe(usersBefore);
  });
});

describe("claims the database could not keep as they are", () => {
  it("an email with a NUL or a lone surrogate is dropped; the user is known by sub", async () => {
    for (const email of ["a\u0000b@example.test", "a\udc00@example.test"]) {
      const sub = newSub();
      const res = await authTest(t, `Bearer ${await env.issuer.sign({ sub, email })}`);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { user: { email: string | null } }).user.email ?? "").toBe("");
    }
  });
});

describe("the Authorization header", () => {
  it("no header at all → 401 missing key", async () => {
    await expectUnauthorized(await authTest(t), "missing key");
  });

  it("an empty header → 401 missing key", async () => {
    await expectUnauthorized(await authTest(t, ""), "missing key");
  });

  const malformed: [label: string, header: (jwt: string) => string][] = [
    ["Token <jwt>", (jwt) => `Token ${jwt}`],
    ["Basic credentials", () => `Basic ${Buffer.from("admin:admin").toString("base64")}`],
    ["the bare token without a scheme", (jwt) => jwt],
    ["Bearer with no token", () => "Bearer "],
    ["Bearer with two tokens", (jwt) => `Bearer ${jwt} ${jwt}`],
    ["two Bearer credentials in one header", (jwt) => `Bearer ${jwt}, Bearer ${jwt}`],
    ["Bearer<jwt> without the space", (jwt) => `Bearer${jwt}`],
    ["a token with characters outside b64token", (jwt) => `Bearer ${jwt}"`],
  ];

  it.each(malformed)("%s → 401 invalid or missing key, nothing verified", async (_label, header) => {
    const jwt = await env.issuer.sign({ sub: newSub() });
    const before = { ...env.issuer.fetches };
    const requestId = await expectUnauthorized(await authTest(t, header(jwt)));
    // Refused at the header: the verifier was never asked.
    expect(rejectionLogged(t, requestId)).toBeUndefined();
    expect(env.issuer.fetches).toEqual(before);
  });

  it.each(["bearer", "BEARER", "BeArEr"])("the scheme is case-insensitive (RFC 6750 / RFC 9110): %s <jwt> is accepted", async (scheme) => {
    const sub = newSub();
    const res = await authTest(t, `${scheme} ${await env.issuer.sign({ sub, email: `${sub}@example.test` })}`);
    expect(res.status).toBe(200);
  });
});

describe("valid tokens (positive controls)", () => {
  it.each(["RS256", "ES256", "EdDSA"] as const)("%s → 200", async (alg) => {
    const sub = newSub();
    await expectOk(t, await env.issuer.sign({ sub, email: `${sub}@example.test` }, { alg }), sub);
  });

  it("a token that expired 10 s ago is still accepted (30 s clock tolerance)", async () => {
    const sub = newSub();
    await expectOk(t, await env.issuer.sign({ sub, email: `${sub}@example.test` }, { expiresIn: nowS() - 10 }), sub);
  });

  it("a token whose nbf is 10 s ahead is accepted (30 s clock tolerance)", async () => {
    const sub = newSub();
    await expectOk(t, await env.issuer.sign({ sub, email: `${sub}@example.test` }, { notBefore: nowS() + 10 }), sub);
  });

  it("the tolerance is exactly 30 s on both sides (app clock pinned)", async () => {
    const now = nowS();
    const app = buildTestApp({ database: env.db.database, issuer: env.issuer, clock: fixedClock(now * 1000) });
    await expectOk(app, await env.issuer.sign({ sub: newSub() }, { expiresIn: now - 29 }));
    await expectUnauthorized(await authTest(app, `Bearer ${await env.issuer.sign({ sub: newSub() }, { expiresIn: now - 30 })}`));
    await expectOk(app, await env.issuer.sign({ sub: newSub() }, { notBefore: now + 30 }));
    await expectUnauthorized(await authTest(app, `Bearer ${await env.issuer.sign({ sub: newSub() }, { notBefore: now + 31 })}`));
  });
});

describe("the key set: caching, rotation, floods", () => {
  /** A fresh issuer and app per test: fetch counters and jose's key-set state are the test's own. */
  async function isolated(options: { clock?: ReturnType<typeof fixedClock> } = {}) {
    const own = await startTestIssuer();
    let networkCalls = 0;
    const countingFetch: typeof fetch = (input, init) => {
      networkCalls += 1;
      return fetch(input, init);
    };
    const app = buildTestApp({ database: env.db.database, issuer: own, fetch: countingFetch, ...(options.clock ? { clock: options.clock } : {}) });
    return { own, app, networkCalls: () => networkCalls };
  }

  /** jose reads Date.now() for its cooldown; the app reads its clock: move both together. */
  function timeMachine() {
    const start = Date.now();
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(start);
    const clock = fixedClock(start);
    return {
      clock,
      advance(ms: number) {
        clock.advance(ms);
        vi.setSystemTime(clock.now());
      },
    };
  }

  it("a warm key set verifies without touching the network (20 requests)", async () => {
    const { own, app, networkCalls } = await isolated();
    try {
      await expectOk(app, await own.sign({ sub: newSub() }));
      expect(own.fetches).toEqual({ discovery: 1, jwks: 1 });
      const calls = networkCalls();
      for (let i = 0; i < 20; i += 1) {
        const sub = newSub();
        await expectOk(app, await own.sign({ sub, email: `${sub}@example.test` }, { alg: (["RS256", "ES256", "EdDSA"] as const)[i % 3] }), sub);
      }
      expect(networkCalls()).toBe(calls);
      expect(own.fetches).toEqual({ discovery: 1, jwks: 1 });
    } finally {
      await own.close();
    }
  });

  it("a second instance sharing the key-value store reuses the discovery result and the key set", async () => {
    const { own, app } = await isolated();
    try {
      await expectOk(app, await own.sign({ sub: newSub() }));
      const second = buildTestApp({ database: env.db.database, issuer: own, kv: app.deps.kv });
      await expectOk(second, await own.sign({ sub: newSub() }, { alg: "EdDSA" }));
      expect(own.fetches).toEqual({ discovery: 1, jwks: 1 });
    } finally {
      await own.close();
    }
  });

  it("after a key rotation, tokens of the new keys verify without a restart; old-key tokens stop", async () => {
    const time = timeMachine();
    const { own, app } = await isolated({ clock: time.clock });
    try {
      const oldToken = await own.sign({ sub: newSub() });
      await expectOk(app, oldToken);
      expect(own.fetches.jwks).toBe(1);

      await own.rotate();
      // Within jose's 30 s cooldown since the last fetch the unknown kid does not refetch: still 401.
      const early = await own.sign({ sub: newSub() });
      await expectUnauthorized(await authTest(app, `Bearer ${early}`));
      expect(own.fetches.jwks).toBe(1);

      time.advance(31_000);
      const sub = newSub();
      await expectOk(app, await own.sign({ sub, email: `${sub}@example.test` }, { alg: "ES256" }), sub);
      expect(own.fetches.jwks).toBe(2);
      // The same app instance now knows all new keys, and no longer the old ones.
      await expectOk(app, await own.sign({ sub: newSub() }, { alg: "RS256" }));
      await expectOk(app, await own.sign({ sub: newSub() }, { alg: "EdDSA" }));
      await expectOk(app, early);
      const requestId = await expectUnauthorized(await authTest(app, `Bearer ${oldToken}`));
      expect(String(rejectionLogged(app, requestId)?.reason)).toMatch(/ERR_JWKS_NO_MATCHING_KEY/);
      expect(own.fetches.jwks).toBe(2);
      expect(own.fetches.discovery).toBe(1);
    } finally {
      await own.close();
    }
  });

  it("a flood of unknown kids fetches the key set at most once per 30 s (concurrent, then sequential)", async () => {
    const time = timeMachine();
    const { own, app } = await isolated({ clock: time.clock });
    const ghosts = (n: number) => Promise.all(Array.from({ length: n }, () => own.sign({ sub: newSub() }, { kid: `ghost-${randomSuffix()}` })));
    const allRejected = async (responses: Response[]) => {
      for (const res of responses) await expectUnauthorized(res);
    };
    try {
      await expectOk(app, await own.sign({ sub: newSub() }));
      expect(own.fetches.jwks).toBe(1);

      // Inside the cooldown of the first fetch: 50 concurrent, then 50 sequential → no fetch.
      await allRejected(await Promise.all((await ghosts(50)).map((jwt) => authTest(app, `Bearer ${jwt}`))));
      for (const jwt of await ghosts(50)) await allRejected([await authTest(app, `Bearer ${jwt}`)]);
      expect(own.fetches.jwks).toBe(1);

      // Cooldown over: 50 concurrent unknown kids share one refetch.
      time.advance(31_000);
      await allRejected(await Promise.all((await ghosts(50)).map((jwt) => authTest(app, `Bearer ${jwt}`))));
      expect(own.fetches.jwks).toBe(2);
      for (const jwt of await ghosts(50)) await allRejected([await authTest(app, `Bearer ${jwt}`)]);
      expect(own.fetches.jwks).toBe(2);

      // Cooldown over again: 50 sequential unknown kids → exactly one more.
      time.advance(31_000);
      for (const jwt of await ghosts(50)) await allRejected([await authTest(app, `Bearer ${jwt}`)]);
      expect(own.fetches.jwks).toBe(3);
      expect(own.fetches.discovery).toBe(1);

      // Valid tokens still pass throughout.
      await expectOk(app, await own.sign({ sub: newSub() }, { alg: "ES256" }));
      expect(own.fetches.jwks).toBe(3);
    } finally {
      await own.close();
    }
  });
});
