import { describe, expect, it } from "vitest";
import type { AuditRecord } from "../../src/services/audit/log";
import { buildTestApp, type TestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { json, newUser, type TestUser } from "../support/users";

const env = useTestEnvironment();

async function userId(t: TestApp, user: TestUser): Promise<string> {
  const res = await t.request("/v1/auth/test", { headers: user.headers });
  return ((await res.json()) as { user: { id: string } }).user.id;
}

async function auditOf(t: TestApp, admin: TestUser, query: string): Promise<{ entries: AuditRecord[]; nextCursor: string | null }> {
  const res = await t.request(`/api/v1/admin/audit?${query}`, { headers: admin.headers });
  expect(res.status).toBe(200);
  return (await res.json()) as { entries: AuditRecord[]; nextCursor: string | null };
}

describe("the admin audit log", () => {
  it("records each admin write with who, what, when and the request id, without secrets", async () => {
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer });
    const admin = await newUser(env.issuer, { admin: true });
    const member = await newUser(env.issuer);
    const adminId = await userId(t, admin);
    const memberId = await userId(t, member);

    const kb = await t.request("/api/v1/kb", { ...json({ content: "# Help\n\nAsk us." }, admin.headers), method: "PUT" });
    expect(kb.status).toBe(200);
    const created = await t.request("/api/v1/admin/api-keys", json({ name: "audit" }, admin.headers));
    const key = (await created.json()) as { keyId: string; key: string };
    const award = await t.request("/api/v1/wallet/coins/award", json({ userId: memberId, amount: 25, reason: "welcome" }, { authorization: `Bearer ${key.key}` }));
    expect(award.status).toBe(200);
    const revoke = await t.request(`/api/v1/admin/api-keys/${key.keyId}`, { method: "DELETE", headers: admin.headers });
    expect(revoke.status).toBe(200);

    const { entries } = await auditOf(t, admin, `actorUserId=${adminId}`);
    expect(entries.map((e) => e.action)).toEqual(["api_key.revoke", "coins.award", "api_key.create", "kb.replace"]);
    const [revoked, awarded, keyed, replaced] = entries;
    expect(revoked).toMatchObject({ targetType: "api_key", targetId: key.keyId, credential: "token", requestId: revoke.headers.get("x-request-id") });
    expect(awarded).toMatchObject({ targetType: "user", targetId: memberId, credential: "api_key", apiKeyId: key.keyId, details: { amount: 25, reason: "welcome" } });
    expect(awarded?.requestId).toBe(award.headers.get("x-request-id"));
    expect(keyed?.requestId).toBe(created.headers.get("x-request-id"));
    expect(replaced).toMatchObject({ targetType: "kb_version", requestId: kb.headers.get("x-request-id") });
    expect(JSON.stringify(entries)).not.toContain(key.key);
    for (const e of entries) expect(Date.parse(e.createdAt)).not.toBeNaN();
  });

  it("writes nothing for a write that failed, and pages newest first with filters", async () => {
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer });
    const admin = await newUser(env.issuer, { admin: true });
    const adminId = await userId(t, admin);
    expect((await t.request("/api/v1/wallet/coins/award", json({ userId: "usr_nobody", amount: 1, reason: "x" }, admin.headers))).status).toBe(404);
    expect((await t.request("/api/v1/admin/api-keys/key_nothing", { method: "DELETE", headers: admin.headers })).status).toBe(404);
    expect((await auditOf(t, admin, `actorUserId=${adminId}`)).entries).toEqual([]);

    for (let i = 0; i < 3; i++) expect((await t.request("/api/v1/admin/api-keys", json({ name: `k${i}` }, admin.headers))).status).toBe(201);
    const first = await auditOf(t, admin, `actorUserId=${adminId}&action=api_key.create&limit=2`);
    expect(first.entries.map((e) => e.details.name)).toEqual(["k2", "k1"]);
    expect(first.nextCursor).toBe(first.entries[1]?.auditId);
    const second = await auditOf(t, admin, `actorUserId=${adminId}&action=api_key.create&limit=2&cursor=${first.nextCursor}`);
    expect(second.entries.map((e) => e.details.name)).toEqual(["k0"]);
    expect(second.nextCursor).toBeNull();
  });

  it("answers 400 to a malformed query and 403 to a member", async () => {
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer });
    const admin = await newUser(env.issuer, { admin: true });
    const member = await newUser(env.issuer);
    for (const q of ["limit=0", "limit=101", "cursor=nope", "action=DROP%20TABLE"]) {
      const res = await t.request(`/api/v1/admin/audit?${q}`, { headers: admin.headers });
      expect(res.status, q).toBe(400);
      expect(((await res.json()) as { error: string }).error).toBe("invalid_input");
    }
    expect((await t.request("/api/v1/admin/audit", { headers: member.headers })).status).toBe(403);
    expect((await t.request("/api/v1/admin/audit")).status).toBe(401);
  });
});
