import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { apiKeys } from "../../src/db/schema";
import { sha256Hex } from "../../src/platform/hash";
import { fixedClock } from "../../src/platform/clock";
import { buildTestApp, type TestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { json, newUser, type TestUser } from "../support/users";
import { waitFor } from "../support/wait";

const DAY = 24 * 3_600_000;
const env = useTestEnvironment();

interface Created {
  keyId: string;
  key: string;
  prefix: string;
  createdAt: string;
  expiresAt: string | null;
}

async function createKey(t: TestApp, admin: TestUser, body: Record<string, unknown> = {}): Promise<Created> {
  const res = await t.request("/api/v1/admin/api-keys", json(body, admin.headers));
  expect(res.status).toBe(201);
  return (await res.json()) as Created;
}

const withKey = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });

describe("admin API keys", () => {
  it("creates a 64-hex key shown once, stores only its hash, and the key acts as its admin", async () => {
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer });
    const admin = await newUser(env.issuer, { admin: true });
    const created = await createKey(t, admin, { name: "ci" });
    expect(created.key).toMatch(/^[0-9a-f]{64}$/);
    expect(created.prefix).toBe(created.key.slice(0, 8));
    expect(created.expiresAt).toBeNull();
    expect(Object.keys(created).sort()).toEqual(["createdAt", "expiresAt", "key", "keyId", "name", "prefix"]);

    const [row] = await env.db.database.db.select().from(apiKeys).where(eq(apiKeys.id, created.keyId));
    expect(row?.keyHash).toBe(await sha256Hex(created.key));
    expect(JSON.stringify(row)).not.toContain(created.key);

    const me = await t.request("/v1/auth/test", withKey(created.key));
    expect(me.status).toBe(200);
    const adminMe = (await (await t.request("/v1/auth/test", { headers: admin.headers })).json()) as { user: { id: string } };
    expect(await me.json()).toEqual({
      success: true,
      message: "API key is valid",
      user: { id: adminMe.user.id, email: admin.email, role: "admin", permissions: ["read", "write", "admin"] },
    });
  });

  it("lists keys without secrets and records last use without a write per request", async () => {
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer });
    const admin = await newUser(env.issuer, { admin: true });
    const created = await createKey(t, admin);
    for (let i = 0; i < 5; i++) expect((await t.request("/v1/auth/test", withKey(created.key))).status).toBe(200);

    // Last use is recorded after the answer, off the request's path.
    const listed = await waitFor("the key's last use", async () => {
      const res = await t.request("/api/v1/admin/api-keys", { headers: admin.headers });
      const body = (await res.json()) as { keys: Record<string, unknown>[] };
      const key = body.keys.find((k) => k.keyId === created.keyId);
      return key?.lastUsedAt ? key : undefined;
    });
    expect(listed).toMatchObject({ keyId: created.keyId, prefix: created.prefix, ageDays: 0, rotationAdvised: false });
    expect(listed?.lastUsedAt).toEqual(expect.any(String));
    expect(JSON.stringify(listed)).not.toContain(created.key);
    expect(listed).not.toHaveProperty("key");
  });

  it("revokes at once", async () => {
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer });
    const admin = await newUser(env.issuer, { admin: true });
    const created = await createKey(t, admin);
    expect((await t.request("/v1/auth/test", withKey(created.key))).status).toBe(200);
    const del = await t.request(`/api/v1/admin/api-keys/${created.keyId}`, { method: "DELETE", headers: admin.headers });
    expect(del.status).toBe(200);
    const after = await t.request("/v1/auth/test", withKey(created.key));
    expect(after.status).toBe(401);
    expect(await after.json()).toMatchObject({ error: "unauthorized", message: "invalid key", code: 401 });
    const again = await t.request(`/api/v1/admin/api-keys/${created.keyId}`, { method: "DELETE", headers: admin.headers });
    expect(again.status).toBe(404);
  });

  it("answers 'key expired' after expiresAt, and warns on keys older than 90 days", async () => {
    const clock = fixedClock(Date.parse("2026-01-01T00:00:00Z"));
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer, clock });
    const admin = await newUser(env.issuer, { admin: true });
    const expiring = await createKey(t, admin, { expiresAt: "2026-01-02T00:00:00Z" });
    const lasting = await createKey(t, admin);
    expect(expiring.expiresAt).toBe("2026-01-02T00:00:00.000Z");

    const fresh = await t.request("/v1/auth/test", withKey(lasting.key));
    expect(fresh.headers.get("warning")).toBeNull();

    clock.advance(DAY + 1);
    const expired = await t.request("/v1/auth/test", withKey(expiring.key));
    expect(expired.status).toBe(401);
    expect(await expired.json()).toMatchObject({ message: "key expired" });

    clock.advance(90 * DAY);
    const old = await t.request("/v1/auth/test", withKey(lasting.key));
    expect(old.status).toBe(200);
    expect(old.headers.get("warning")).toMatch(/^299 - ".*90 days/);
    // An answer that fails still carries the advice: the key was used and still works.
    const missing = await t.request("/api/v1/admin/api-keys/key_nothing", { method: "DELETE", ...withKey(lasting.key) });
    expect(missing.status).toBe(403);
    expect(missing.headers.get("warning")).toMatch(/^299 - ".*90 days/);
    expect(missing.headers.get("x-ratelimit-remaining")).not.toBeNull();
  });

  it("takes a key in upper or mixed case as the same key", async () => {
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer });
    const admin = await newUser(env.issuer, { admin: true });
    const { key } = await createKey(t, admin);
    for (const spelling of [key.toUpperCase(), `${key.slice(0, 32).toUpperCase()}${key.slice(32)}`]) {
      expect((await t.request("/v1/auth/test", withKey(spelling))).status).toBe(200);
    }
  });

  it("rejects unknown keys, non-admin creators and bad input", async () => {
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer });
    const unknown = await t.request("/v1/auth/test", withKey("a".repeat(64)));
    expect(unknown.status).toBe(401);
    expect(await unknown.json()).toMatchObject({ message: "invalid key" });

    const user = await newUser(env.issuer);
    const forbidden = await t.request("/api/v1/admin/api-keys", json({}, user.headers));
    expect(forbidden.status).toBe(403);

    const admin = await newUser(env.issuer, { admin: true });
    // The last one is in the year 10000 once its offset is applied: the database cannot keep it.
    for (const body of [{ expiresAt: "yesterday" }, { expiresAt: "2001-01-01T00:00:00Z" }, { name: "" }, { extra: 1 }, { expiresAt: "9999-12-31T23:59:59-23:59" }]) {
      const res = await t.request("/api/v1/admin/api-keys", json(body, admin.headers));
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(await res.json()).toMatchObject({ error: "invalid_input" });
    }
    const badId = await t.request("/api/v1/admin/api-keys/not%20an%20id", { method: "DELETE", headers: admin.headers });
    expect(badId.status).toBe(400);
  });

  it("is managed by signed-in admins only: a key cannot issue, list or revoke keys", async () => {
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer });
    const admin = await newUser(env.issuer, { admin: true });
    const shortLived = await createKey(t, admin, { expiresAt: new Date(Date.now() + 60_000).toISOString() });
    const other = await createKey(t, admin);
    const asKey = (init: RequestInit = {}) => ({ ...init, headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${shortLived.key}` } });
    const attempts = [
      await t.request("/api/v1/admin/api-keys", asKey({ method: "POST", body: "{}", headers: { "content-type": "application/json" } })),
      await t.request("/api/v1/admin/api-keys", asKey()),
      await t.request(`/api/v1/admin/api-keys/${other.keyId}`, asKey({ method: "DELETE" })),
    ];
    for (const res of attempts) {
      expect(res.status).toBe(403);
      expect(await res.json()).toMatchObject({ error: "forbidden", message: expect.stringContaining("signed-in admin") });
    }
    // The key is otherwise an admin, and nothing changed.
    expect((await t.request("/v1/auth/test", withKey(shortLived.key))).status).toBe(200);
    const listed = (await (await t.request("/api/v1/admin/api-keys", { headers: admin.headers })).json()) as { keys: { keyId: string }[] };
    expect(listed.keys.map((k) => k.keyId)).toEqual(expect.arrayContaining([shortLived.keyId, other.keyId]));
    const rows = await env.db.database.db.select().from(apiKeys).where(eq(apiKeys.createdBy, (await (await t.request("/v1/auth/test", withKey(other.key))).json()).user.id));
    expect(rows).toHaveLength(2);
  });

  it("stops working when its creator is no longer an admin", async () => {
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer });
    const admin = await newUser(env.issuer, { admin: true });
    const created = await createKey(t, admin);
    const demoted = await env.issuer.sign({ sub: admin.sub, email: admin.email, roles: [] });
    expect((await t.request("/v1/auth/test", { headers: { authorization: `Bearer ${demoted}` } })).status).toBe(200);
    const res = await t.request("/v1/auth/test", withKey(created.key));
    expect(res.status).toBe(401);
  });
});
