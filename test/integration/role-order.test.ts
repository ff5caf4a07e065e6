import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { apiKeys, users } from "../../src/db/schema";
import { buildTestApp, type TestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { json, newUser } from "../support/users";
import { randomSuffix } from "../support/services";

const env = useTestEnvironment();

/** Seconds since the epoch, a whole minute back so that every iat below lies in the past. */
const T = Math.floor(Date.now() / 1000) - 60;

const app = () => buildTestApp({ database: env.db.database, issuer: env.issuer });
const bearer = (credential: string) => ({ headers: { authorization: `Bearer ${credential}` } });

/** A person known to the issuer by `sub`, whose tokens the test mints with chosen `iat`s. */
function person() {
  const sub = `role-${randomSuffix()}${randomSuffix()}`;
  const email = `${sub}@example.test`;
  return {
    sub,
    token: (role: "admin" | "user", iat: number | null) => env.issuer.sign({ sub, email, roles: role === "admin" ? ["admin"] : [] }, { issuedAt: iat, expiresIn: "1h" }),
  };
}

async function who(t: TestApp, credential: string): Promise<{ status: number; role?: string; id?: string }> {
  const res = await t.request("/v1/auth/test", bearer(credential));
  if (res.status !== 200) return { status: res.status };
  const body = (await res.json()) as { user: { id: string; role: string } };
  return { status: 200, role: body.user.role, id: body.user.id };
}

async function createKey(t: TestApp, adminToken: string): Promise<{ keyId: string; key: string }> {
  const res = await t.request("/api/v1/admin/api-keys", json({ name: "role-order" }, bearer(adminToken).headers));
  expect(res.status).toBe(201);
  return (await res.json()) as { keyId: string; key: string };
}

const award = (t: TestApp, credential: string, userId: string) =>
  t.request("/api/v1/wallet/coins/award", json({ userId, amount: 5, reason: "role order" }, bearer(credential).headers));

async function storedRole(sub: string): Promise<string | undefined> {
  const [row] = await env.db.database.db.select({ role: users.role }).from(users).where(eq(users.subject, sub));
  return row?.role;
}

describe("a demoted admin stays demoted", () => {
  it("promote, key works, demote, then the old admin token replayed on a new instance: the key stays dead and the award route answers 403", async () => {
    const first = app();
    const admin = person();
    const member = await newUser(env.issuer);
    const memberId = (await who(first, member.token)).id as string;

    const promoted = await admin.token("admin", T);
    expect(await who(first, promoted)).toMatchObject({ status: 200, role: "admin" });
    const key = await createKey(first, promoted);
    expect(await who(first, key.key)).toMatchObject({ status: 200, role: "admin" });
    expect((await award(first, key.key, memberId)).status).toBe(200);

    const demoted = await admin.token("user", T + 10);
    expect(await who(first, demoted)).toMatchObject({ status: 200, role: "user" });
    expect((await who(first, key.key)).status).toBe(401);

    // A fresh instance has nothing remembered: only the database can say no.
    const second = app();
    expect(await who(second, promoted)).toMatchObject({ status: 200, role: "user" });
    const refused = await award(second, promoted, memberId);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: "forbidden", code: 403 });
    expect((await who(second, key.key)).status).toBe(401);
    expect((await award(second, key.key, memberId)).status).toBe(401);
    expect(await storedRole(admin.sub)).toBe("user");

    // The instance that once answered the admin token as admin says no as well.
    expect((await award(first, promoted, memberId)).status).toBe(403);
  });

  it("a later promotion does not revive the keys of the earlier one; new keys work", async () => {
    const t = app();
    const admin = person();
    const key = await createKey(t, await admin.token("admin", T));
    await who(t, await admin.token("user", T + 10));
    const [revoked] = await env.db.database.db.select({ revokedAt: apiKeys.revokedAt }).from(apiKeys).where(eq(apiKeys.id, key.keyId));
    expect(revoked?.revokedAt).toBeInstanceOf(Date);

    const again = await admin.token("admin", T + 20);
    expect(await who(t, again)).toMatchObject({ status: 200, role: "admin" });
    expect((await who(t, key.key)).status).toBe(401);
    const listed = (await (await t.request("/api/v1/admin/api-keys", bearer(again))).json()) as { keys: { keyId: string }[] };
    expect(listed.keys.map((k) => k.keyId)).not.toContain(key.keyId);
    const fresh = await createKey(t, again);
    expect(await who(t, fresh.key)).toMatchObject({ status: 200, role: "admin" });
  });

  it("an instance that saw the admin token does not keep answering it as admin after another instance saw the demotion", async () => {
    const [one, two] = [app(), app()];
    const admin = person();
    const promoted = await admin.token("admin", T);
    expect(await who(one, promoted)).toMatchObject({ role: "admin" });
    expect(await who(two, await admin.token("user", T + 10))).toMatchObject({ role: "user" });
    expect(await who(one, promoted)).toMatchObject({ status: 200, role: "user" });
    expect((await one.request("/api/v1/ai-agents/context/stats", bearer(promoted))).status).toBe(403);
  });

  it("an older member token does not demote someone a newer token made admin", async () => {
    const t = app();
    const admin = person();
    const old = await admin.token("user", T);
    expect(await who(t, old)).toMatchObject({ role: "user" });
    const promoted = await admin.token("admin", T + 10);
    const key = await createKey(t, promoted);
    expect(await storedRole(admin.sub)).toBe("admin");
    // The role belongs to the person, set by their newest token: the older token acts with it too
    // (at once on an instance that had not remembered it as a member's; see docs/api/authentication.md).
    expect(await who(app(), old)).toMatchObject({ status: 200, role: "admin" });
    expect(await storedRole(admin.sub)).toBe("admin");
    expect((await who(t, key.key)).status).toBe(200);
  });

  it("two tokens issued in the same second that disagree leave the lower role, in either order", async () => {
    const t = app();
    const a = person();
    await who(t, await a.token("admin", T));
    expect(await who(t, await a.token("user", T))).toMatchObject({ role: "user" });
    expect(await who(t, await a.token("admin", T))).toMatchObject({ role: "user" });

    const b = person();
    await who(t, await b.token("user", T));
    expect(await who(t, await b.token("admin", T))).toMatchObject({ role: "user" });
    expect(await storedRole(b.sub)).toBe("user");
    // The next second's admin token promotes.
    expect(await who(t, await b.token("admin", T + 1))).toMatchObject({ role: "admin" });
  });

  it("refuses a token without iat (401): its place in the order of role changes is unknown", async () => {
    const t = app();
    const admin = person();
    const res = await t.request("/v1/auth/test", bearer(await admin.token("admin", null)));
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: "unauthorized", message: "invalid or missing key" });
    expect(t.logs.find((l) => l.msg === "token rejected")?.reason).toMatch(/iat/);
    expect(await storedRole(admin.sub)).toBeUndefined();
  });
});
