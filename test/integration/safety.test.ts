import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { queryRows } from "../../src/db/rows";
import { fixedClock } from "../../src/platform/clock";
import { blockedEitherWay } from "../../src/services/safety/blocks";
import { buildTestApp, type TestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { ENTERPRISE, signIn, type Person } from "../support/people";
import { json } from "../support/users";
import { expectError } from "../support/errors";

const env = useTestEnvironment();
const NOBODY = "usr_00000000000000000000000000";

function app(): { t: TestApp; clock: ReturnType<typeof fixedClock> } {
  const clock = fixedClock(Date.now());
  return { t: buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE, clock }), clock };
}

const block = (t: TestApp, who: Person, body: unknown) => t.request("/api/v1/blocks", json(body, who.headers));
const unblock = (t: TestApp, who: Person, userId: string) => t.request(`/api/v1/blocks/${userId}`, { method: "DELETE", headers: who.headers });
const report = (t: TestApp, who: Person, body: unknown) => t.request("/api/v1/reports", json(body, who.headers));
const card = (t: TestApp, who: Person, userId: string) => t.request(`/api/v1/profile/${userId}`, { headers: who.headers });

interface BlockList {
  blocks: { userId: string; displayName: string | null; createdAt: string }[];
}
async function blocksOf(t: TestApp, who: Person): Promise<BlockList> {
  const res = await t.request("/api/v1/blocks", { headers: who.headers });
  expect(res.status).toBe(200);
  return (await res.json()) as BlockList;
}

/** A signed-in person with a visible profile. */
async function member(t: TestApp, displayName: string): Promise<Person> {
  const p = await signIn(t, env.issuer);
  const res = await t.request("/api/v1/profile", {
    method: "PUT",
    headers: { ...p.headers, "content-type": "application/json" },
    body: JSON.stringify({ displayName, birthDate: "1992-03-04", gender: "nonbinary", interestedIn: ["woman", "man"] }),
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return p;
}

async function blockRows(blockerId: string): Promise<string[]> {
  const rows = await queryRows<{ blocked_id: string }>(env.db.database.db, sql`select blocked_id from blocks where blocker_id = ${blockerId} order by blocked_id`);
  return rows.map((r) => r.blocked_id);
}

describe("blocks", () => {
  it("blocks (201), and blocking again answers 200 with the first block's time", async () => {
    const { t, clock } = app();
    const a = await member(t, "Asha");
    const b = await member(t, "Baraka");
    const first = await block(t, a, { userId: b.id });
    expect(first.status, await first.clone().text()).toBe(201);
    const at = new Date(clock.now()).toISOString();
    expect(await first.json()).toEqual({ userId: b.id, blocked: true, createdAt: at });
    clock.advance(60_000);
    const again = await block(t, a, { userId: b.id });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ userId: b.id, blocked: true, createdAt: at });
    expect(await blocksOf(t, a)).toEqual({ blocks: [{ userId: b.id, displayName: "Baraka", createdAt: at }] });
    expect(await blockRows(a.id)).toEqual([b.id]);
  });

  it("lists only the caller's blocks, newest first, with the display name (null without one)", async () => {
    const { t, clock } = app();
    const a = await member(t, "Asha");
    const b = await member(t, "Baraka");
    const noProfile = await signIn(t, env.issuer);
    expect((await block(t, a, { userId: b.id })).status).toBe(201);
    clock.advance(1_000);
    expect((await block(t, a, { userId: noProfile.id })).status).toBe(201);
    expect((await block(t, b, { userId: noProfile.id })).status).toBe(201);
    const list = await blocksOf(t, a);
    expect(list.blocks.map((x) => [x.userId, x.displayName])).toEqual([
      [noProfile.id, null],
      [b.id, "Baraka"],
    ]);
    expect((await blocksOf(t, b)).blocks.map((x) => x.userId)).toEqual([noProfile.id]);
    expect(await blocksOf(t, noProfile)).toEqual({ blocks: [] });
  });

  it("refuses to block yourself (400), an unknown user (404) and malformed input (400 with details)", async () => {
    const { t } = app();
    const a = await member(t, "Asha");
    const self = await expectError(await block(t, a, { userId: a.id }), 400, "invalid_input");
    expect(self.details).toEqual([{ path: "userId", message: expect.any(String) }]);
    await expectError(await block(t, a, { userId: NOBODY }), 404, "not_found");
    for (const [body, path] of [
      [{}, "userId"],
      [{ userId: "not-an-id" }, "userId"],
      [{ userId: 42 }, "userId"],
      [{ userId: NOBODY, extra: true }, "(root)"],
    ] as const) {
      const err = await expectError(await block(t, a, body), 400, "invalid_input");
      expect(err.details?.map((d) => d.path), JSON.stringify(body)).toContain(path);
    }
    expect(await blockRows(a.id)).toEqual([]);
  });

  it("hides both people from each other, whoever blocked, until unblocked (204)", async () => {
    const { t } = app();
    const a = await member(t, "Asha");
    const b = await member(t, "Baraka");
    expect((await block(t, a, { userId: b.id })).status).toBe(201);
    await expectError(await card(t, a, b.id), 404, "not_found");
    await expectError(await card(t, b, a.id), 404, "not_found");
    expect(await blockedEitherWay(env.db.database.db, b.id, a.id)).toBe(true);

    const res = await unblock(t, a, b.id);
    expect(res.status).toBe(204);
    expect(await res.text()).toBe("");
    expect((await card(t, a, b.id)).status).toBe(200);
    expect((await card(t, b, a.id)).status).toBe(200);
    await expectError(await unblock(t, a, b.id), 404, "not_found");
  });

  it("unblocking only ever removes the caller's own block", async () => {
    const { t } = app();
    const a = await member(t, "Asha");
    const b = await member(t, "Baraka");
    const c = await member(t, "Chidi");
    expect((await block(t, a, { userId: b.id })).status).toBe(201);
    // Neither the blocked person nor a third party can lift A's block.
    await expectError(await unblock(t, b, a.id), 404, "not_found");
    await expectError(await unblock(t, c, b.id), 404, "not_found");
    await expectError(await unblock(t, c, a.id), 404, "not_found");
    expect(await blockRows(a.id)).toEqual([b.id]);
    await expectError(await card(t, b, a.id), 404, "not_found");
    // Malformed ids are 400, unknown ones 404.
    const bad = await expectError(await unblock(t, a, "not-an-id"), 400, "invalid_input");
    expect(bad.details?.map((d) => d.path)).toEqual(["userId"]);
    await expectError(await unblock(t, a, NOBODY), 404, "not_found");
  });

  it("mutual blocks are independent: lifting one keeps the other in force", async () => {
    const { t } = app();
    const a = await member(t, "Asha");
    const b = await member(t, "Baraka");
    expect((await block(t, a, { userId: b.id })).status).toBe(201);
    expect((await block(t, b, { userId: a.id })).status).toBe(201);
    expect((await unblock(t, a, b.id)).status).toBe(204);
    await expectError(await card(t, a, b.id), 404, "not_found");
    await expectError(await card(t, b, a.id), 404, "not_found");
  });
});

describe("reports", () => {
  it("files the report (201) and blocks the reported person", async () => {
    const { t, clock } = app();
    const a = await member(t, "Asha");
    const b = await member(t, "Baraka");
    const res = await report(t, a, { userId: b.id, reason: "harassment", details: "  Sent abusive messages.  " });
    expect(res.status, await res.clone().text()).toBe(201);
    const body = (await res.json()) as { reportId: string };
    expect(body).toEqual({ reportId: expect.stringMatching(/^rep_[0-9a-z]{26}$/), reason: "harassment", blocked: true });

    const rows = await queryRows<{ reporter_id: string; reported_id: string; reason: string; details: string | null }>(
      env.db.database.db,
      sql`select reporter_id, reported_id, reason, details from reports where id = ${body.reportId}`,
    );
    expect(rows).toEqual([{ reporter_id: a.id, reported_id: b.id, reason: "harassment", details: "Sent abusive messages." }]);
    expect(await blocksOf(t, a)).toEqual({ blocks: [{ userId: b.id, displayName: "Baraka", createdAt: new Date(clock.now()).toISOString() }] });
    await expectError(await card(t, a, b.id), 404, "not_found");
    await expectError(await card(t, b, a.id), 404, "not_found");
  });

  it("accepts a report of someone already blocked, and a second report, keeping one block", async () => {
    const { t } = app();
    const a = await member(t, "Asha");
    const b = await member(t, "Baraka");
    expect((await block(t, a, { userId: b.id })).status).toBe(201);
    for (const reason of ["spam", "fake_profile"]) {
      const res = await report(t, a, { userId: b.id, reason });
      expect(res.status).toBe(201);
      expect(await res.json()).toMatchObject({ reason, blocked: true });
    }
    expect(await blockRows(a.id)).toEqual([b.id]);
    const [count] = await queryRows<{ n: number }>(env.db.database.db, sql`select count(*)::int as n from reports where reporter_id = ${a.id}`);
    expect(count?.n).toBe(2);
  });

  it.each(["spam", "harassment", "fake_profile", "underage", "inappropriate_content", "other"])("takes the reason %s", async (reason) => {
    const { t } = app();
    const a = await signIn(t, env.issuer);
    const b = await signIn(t, env.issuer);
    const res = await report(t, a, { userId: b.id, reason });
    expect(res.status).toBe(201);
  });

  it("refuses yourself (400), an unknown user (404) and invalid input (400 with details), filing nothing", async () => {
    const { t } = app();
    const a = await member(t, "Asha");
    const b = await member(t, "Baraka");
    const self = await expectError(await report(t, a, { userId: a.id, reason: "spam" }), 400, "invalid_input");
    expect(self.details?.map((d) => d.path)).toEqual(["userId"]);
    await expectError(await report(t, a, { userId: NOBODY, reason: "spam" }), 404, "not_found");
    for (const [body, path] of [
      [{ userId: b.id }, "reason"],
      [{ userId: b.id, reason: "rude" }, "reason"],
      [{ reason: "spam" }, "userId"],
      [{ userId: "bob", reason: "spam" }, "userId"],
      [{ userId: b.id, reason: "spam", details: "x".repeat(2001) }, "details"],
      [{ userId: b.id, reason: "spam", details: 5 }, "details"],
      [{ userId: b.id, reason: "spam", block: false }, "(root)"],
    ] as const) {
      const err = await expectError(await report(t, a, body), 400, "invalid_input");
      expect(err.details?.map((d) => d.path), JSON.stringify(body)).toContain(path);
    }
    const [count] = await queryRows<{ n: number }>(env.db.database.db, sql`select count(*)::int as n from reports where reporter_id = ${a.id}`);
    expect(count?.n).toBe(0);
    expect(await blockRows(a.id)).toEqual([]);
  });
});
