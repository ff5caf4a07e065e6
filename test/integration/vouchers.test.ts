import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { ledgerTransactions } from "../../src/db/schema";
import { vouchers } from "../../src/db/tables/vouchers";
import { fixedClock } from "../../src/platform/clock";
import { codeHash, canonicalCode } from "../../src/services/vouchers/codes";
import { FAILURES_PER_ADDRESS, FAILURES_PER_USER } from "../../src/services/vouchers/redeem";
import { buildTestApp, type TestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { json, newUser, type TestUser } from "../support/users";

const env = useTestEnvironment();

interface Batch {
  batchId: string;
  codes: { voucherId: string; code: string }[];
}

const app = (clock = fixedClock(Date.now())) => ({ clock, t: buildTestApp({ database: env.db.database, issuer: env.issuer, clock, deps: { clientAddress: (r) => r.headers.get("x-test-peer") } }) });

async function createBatch(t: TestApp, admin: TestUser, body: Record<string, unknown>): Promise<Batch> {
  const res = await t.request("/api/v1/admin/vouchers", json(body, admin.headers));
  expect(res.status).toBe(201);
  return (await res.json()) as Batch;
}

const redeem = (t: TestApp, user: TestUser, code: string, peer = "198.51.100.1") => t.request("/api/v1/vouchers/redeem", json({ code }, { ...user.headers, "x-test-peer": peer }));

async function inventory(t: TestApp, admin: TestUser, batchId: string) {
  const res = await t.request("/api/v1/admin/vouchers?limit=100", { headers: admin.headers });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { batches: { batchId: string; byStatus: Record<string, number>; coinsOutstanding: number; coinsRedeemed: number }[] };
  return body.batches.find((b) => b.batchId === batchId);
}

describe("vouchers", () => {
  it("creates codes shown once and stored hashed, credits the wallet through the ledger once, and counts inventory", async () => {
    const { t } = app();
    const admin = await newUser(env.issuer, { admin: true });
    const member = await newUser(env.issuer);
    const batch = await createBatch(t, admin, { coins: 250, count: 3, note: "launch" });
    expect(batch.codes).toHaveLength(3);
    for (const c of batch.codes) expect(c.code).toMatch(/^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){3}$/);

    const [row] = await env.db.database.db.select().from(vouchers).where(eq(vouchers.id, batch.codes[0]!.voucherId));
    expect(row?.codeHash).toBe(await codeHash(canonicalCode(batch.codes[0]!.code)!));
    expect(JSON.stringify(row)).not.toContain(batch.codes[0]!.code.replace(/-/g, ""));

    // Typed in lower case with spaces instead of dashes: the same code.
    const typed = batch.codes[0]!.code.toLowerCase().replace(/-/g, " ");
    const res = await redeem(t, member, typed);
    expect(res.status).toBe(200);
    const credited = (await res.json()) as { coins: number; balance: number; transactionId: string };
    expect(credited).toMatchObject({ coins: 250, balance: 250, voucherId: batch.codes[0]!.voucherId });
    const [txn] = await env.db.database.db.select().from(ledgerTransactions).where(eq(ledgerTransactions.id, credited.transactionId));
    expect(txn).toMatchObject({ type: "voucher", externalRef: `voucher:${batch.codes[0]!.voucherId}` });

    const again = await redeem(t, member, batch.codes[0]!.code);
    expect(again.status).toBe(409);
    const overview = (await (await t.request("/api/v1/wallet/overview", { headers: member.headers })).json()) as { balance?: number; wallet?: { balance: number } };
    expect(JSON.stringify(overview)).toContain("250");

    expect(await inventory(t, admin, batch.batchId)).toMatchObject({ byStatus: { active: 2, redeemed: 1, expired: 0, revoked: 0 }, coinsOutstanding: 500, coinsRedeemed: 250 });
    // The codes never reach the audit log.
    const audit = await (await t.request("/api/v1/admin/audit?action=voucher_batch.create&limit=100", { headers: admin.headers })).text();
    expect(audit).toContain(batch.batchId);
    for (const c of batch.codes) expect(audit).not.toContain(c.code);
  });

  it("lets exactly one of many concurrent redemptions of one code succeed; the rest answer 409", async () => {
    const { t } = app();
    const admin = await newUser(env.issuer, { admin: true });
    const [code] = (await createBatch(t, admin, { coins: 40, count: 1 })).codes;
    const people = await Promise.all(Array.from({ length: 8 }, () => newUser(env.issuer)));
    // Each person's wallet row exists first, so the race is on the code alone.
    await Promise.all(people.map((p) => t.request("/api/v1/wallet/overview", { headers: p.headers })));
    const answers = await Promise.all([...people, people[0]!, people[1]!].map((p, i) => redeem(t, p, code!.code, `203.0.113.${i}`)));
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses).toEqual([200, ...Array(9).fill(409)]);
    const credits = await env.db.database.db.select().from(ledgerTransactions).where(eq(ledgerTransactions.externalRef, `voucher:${code!.voucherId}`));
    expect(credits).toHaveLength(1);
  });

  it("refuses expired and revoked codes, revokes a batch but not what was redeemed", async () => {
    const { t, clock } = app();
    const admin = await newUser(env.issuer, { admin: true });
    const member = await newUser(env.issuer);
    const soon = await createBatch(t, admin, { coins: 10, count: 2, expiresAt: new Date(clock.now() + 30_000).toISOString() });
    clock.advance(60_000);
    const expired = await redeem(t, member, soon.codes[0]!.code);
    expect(expired.status).toBe(409);
    expect(((await expired.json()) as { message: string }).message).toContain("expired");
    expect(await inventory(t, admin, soon.batchId)).toMatchObject({ byStatus: { active: 0, expired: 2 }, coinsOutstanding: 0 });

    const batch = await createBatch(t, admin, { coins: 10, count: 3 });
    expect((await redeem(t, member, batch.codes[0]!.code)).status).toBe(200);
    const one = await t.request(`/api/v1/admin/vouchers/${batch.codes[1]!.voucherId}/revoke`, json({}, admin.headers));
    expect(one.status).toBe(200);
    expect((await redeem(t, member, batch.codes[1]!.code)).status).toBe(409);
    expect((await t.request(`/api/v1/admin/vouchers/${batch.codes[0]!.voucherId}/revoke`, json({}, admin.headers))).status).toBe(409);
    const all = await t.request(`/api/v1/admin/vouchers/batches/${batch.batchId}/revoke`, json({}, admin.headers));
    expect(await all.json()).toEqual({ batchId: batch.batchId, revokedCodes: 1 });
    expect((await redeem(t, member, batch.codes[2]!.code)).status).toBe(409);
    expect(await inventory(t, admin, batch.batchId)).toMatchObject({ byStatus: { active: 0, redeemed: 1, revoked: 2 }, coinsOutstanding: 0 });
  });

  it("stops a member after repeated failures, and an address shared by many members", async () => {
    const { t } = app();
    const admin = await newUser(env.issuer, { admin: true });
    const [good, good2] = (await createBatch(t, admin, { coins: 1, count: 2 })).codes;
    const guesser = await newUser(env.issuer);
    for (let i = 0; i < FAILURES_PER_USER; i++) expect((await redeem(t, guesser, `AAAA-AAAA-AAAA-AA${String(i).padStart(2, "0")}`, "192.0.2.10")).status).toBe(404);
    const blocked = await redeem(t, guesser, good!.code, "192.0.2.11");
    expect(blocked.status).toBe(429);
    expect(((await blocked.json()) as { retry_after: number }).retry_after).toBeGreaterThan(0);

    // Many accounts from one address: the address limit stops them all.
    const peer = "192.0.2.77";
    let failures = 0;
    while (failures < FAILURES_PER_ADDRESS) {
      const someone = await newUser(env.issuer);
      for (let i = 0; i < FAILURES_PER_USER - 1 && failures < FAILURES_PER_ADDRESS; i++, failures++) expect((await redeem(t, someone, "0000-0000-0000-0000", peer)).status).toBe(404);
    }
    expect((await redeem(t, await newUser(env.issuer), good2!.code, peer)).status).toBe(429);
    expect((await redeem(t, await newUser(env.issuer), good2!.code, "192.0.2.78")).status).toBe(200);
  });

  it("validates input and keeps admin routes from members", async () => {
    const { t } = app();
    const admin = await newUser(env.issuer, { admin: true });
    const member = await newUser(env.issuer);
    for (const body of [{ coins: 0, count: 1 }, { coins: 1, count: 1001 }, { coins: 1.5, count: 1 }, { coins: 1, count: 1, expiresAt: "2000-01-01T00:00:00Z" }, { coins: 1, count: 1, extra: true }]) {
      const res = await t.request("/api/v1/admin/vouchers", json(body, admin.headers));
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    expect((await t.request("/api/v1/admin/vouchers?cursor=nope", { headers: admin.headers })).status).toBe(400);
    expect((await t.request("/api/v1/admin/vouchers/not-an-id/revoke", json({}, admin.headers))).status).toBe(400);
    expect((await t.request("/api/v1/vouchers/redeem", json({ code: "" }, member.headers))).status).toBe(400);
    expect((await t.request("/api/v1/admin/vouchers", json({ coins: 1, count: 1 }, member.headers))).status).toBe(403);
    expect((await t.request("/api/v1/admin/vouchers", { headers: member.headers })).status).toBe(403);
    expect((await t.request("/api/v1/vouchers/redeem", json({ code: "0000-0000-0000-0000" }))).status).toBe(401);
  });
});
