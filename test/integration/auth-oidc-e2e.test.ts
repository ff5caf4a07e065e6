import { eq } from "drizzle-orm";
import { decodeProtectedHeader } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { users } from "../../src/db/schema";
import { buildTestApp, type TestApp } from "../support/app";
import { createTestDatabase, type TestDatabase } from "../support/database";
import { startOidcProvider, type OidcProviderHandle } from "../support/oidc-provider";
import { randomSuffix } from "../support/services";

/**
 * The whole chain with a real OpenID Connect provider: Authorization Code + PKCE at the provider,
 * an RS256 `at+jwt` access token for our audience, discovery + JWKS at the API, a user row per `sub`.
 */
const audience = "https://api.platform.test";

let provider: OidcProviderHandle;
let db: TestDatabase;
let t: TestApp;

beforeAll(async () => {
  [provider, db] = await Promise.all([startOidcProvider({ audience }), createTestDatabase()]);
  t = buildTestApp({ database: db.database, env: { OIDC_ISSUER: provider.issuer, OIDC_AUDIENCE: audience } });
});
afterAll(async () => {
  await Promise.all([provider?.close(), db?.drop()]);
});

interface AuthTestBody {
  success: boolean;
  message: string;
  user: { id: string; email: string; role: string; permissions: string[] };
}

const authTest = (app: TestApp, token: string) => app.request("/v1/auth/test", { headers: { authorization: `Bearer ${token}` } });

const usersWithSubject = (subject: string) => db.database.db.select().from(users).where(eq(users.subject, subject));

describe("access tokens from a real OpenID Connect provider (authorization code + PKCE)", () => {
  it("the provider issues an RS256 at+jwt for our audience through the PKCE flow", async () => {
    const token = await provider.login(`acct-${randomSuffix()}`);
    expect(decodeProtectedHeader(token)).toMatchObject({ alg: "RS256", typ: "at+jwt" });
    const res = await authTest(t, token);
    expect(res.status).toBe(200);
  });

  it("a user's token authenticates, creates exactly one users row on first use and reuses it", async () => {
    const accountId = `acct-${randomSuffix()}`;
    const email = `${accountId}@provider.test`;
    const token = await provider.login(accountId, { email });
    expect(await usersWithSubject(accountId)).toHaveLength(0);

    const first = await authTest(t, token);
    expect(first.status).toBe(200);
    const body = (await first.json()) as AuthTestBody;
    expect(body).toEqual({
      success: true,
      message: "access token is valid",
      user: { id: expect.stringMatching(/^usr_/), email, role: "user", permissions: ["read", "write"] },
    });

    const rows = await usersWithSubject(accountId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id: body.user.id, subject: accountId, email, role: "user" });

    // Same instance (its user cache), then a fresh instance on the same database (the row itself).
    const again = (await (await authTest(t, token)).json()) as AuthTestBody;
    expect(again.user.id).toBe(body.user.id);
    const other = buildTestApp({ database: db.database, env: { OIDC_ISSUER: provider.issuer, OIDC_AUDIENCE: audience } });
    const fromOther = await authTest(other, token);
    expect(fromOther.status).toBe(200);
    expect(((await fromOther.json()) as AuthTestBody).user.id).toBe(body.user.id);
    expect(await usersWithSubject(accountId)).toHaveLength(1);

    // A second login of the same account (a new token) is still the same user.
    const second = (await (await authTest(t, await provider.login(accountId, { email }))).json()) as AuthTestBody;
    expect(second.user.id).toBe(body.user.id);
    expect(await usersWithSubject(accountId)).toHaveLength(1);
  });

  it("an account with the admin role in the roles claim is an admin", async () => {
    const accountId = `admin-${randomSuffix()}`;
    const token = await provider.login(accountId, { email: `${accountId}@provider.test`, roles: ["admin"] });
    const res = await authTest(t, token);
    expect(res.status).toBe(200);
    const body = (await res.json()) as AuthTestBody;
    expect(body.user).toMatchObject({ email: `${accountId}@provider.test`, role: "admin", permissions: ["read", "write", "admin"] });
    expect(await usersWithSubject(accountId)).toEqual([expect.objectContaining({ id: body.user.id, role: "admin" })]);
  });

  it("other roles do not make an admin", async () => {
    const accountId = `acct-${randomSuffix()}`;
    const token = await provider.login(accountId, { roles: ["moderator", "Admin"] });
    const body = (await (await authTest(t, token)).json()) as AuthTestBody;
    expect(body.user.role).toBe("user");
  });

  it("a token of this provider for another audience is refused", async () => {
    const otherAudience = "https://other-api.platform.test";
    const other = await startOidcProvider({ audience: otherAudience });
    try {
      // The app trusts `other` as its issuer but expects our audience; `other` issues tokens for its own.
      const app = buildTestApp({ database: db.database, env: { OIDC_ISSUER: other.issuer, OIDC_AUDIENCE: audience } });
      const res = await authTest(app, await other.login(`acct-${randomSuffix()}`));
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ error: "unauthorized", message: "invalid or missing key", code: 401 });
      expect(app.logs.find((l) => l.msg === "token rejected")?.reason).toMatch(/aud/);
    } finally {
      await other.close();
    }
  });
});
