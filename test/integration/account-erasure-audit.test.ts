import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import type { Db } from "../../src/db/port";
import { queryRows } from "../../src/db/rows";
import { createMemoryStore } from "../../src/kv/memory";
import { fixedClock } from "../../src/platform/clock";
import { eraseDeletedAccounts, eraseMember } from "../../src/services/account/erasure";
import { GRACE_MS } from "../../src/services/account/grace";
import { buildTestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { ENTERPRISE, award, signIn } from "../support/people";
import { randomSuffix } from "../support/services";
import { json } from "../support/users";

const env = useTestEnvironment();
const db = (): Db => env.db.database.db;
const HOUR = 3_600_000;

type Entry = {
  id: string;
  actor_user_id: string;
  target_id: string;
  details: { reason?: string; note?: string };
  member_ids: string[];
};

const entries = (where: ReturnType<typeof sql>) =>
  queryRows<Entry>(db(), sql`select id, actor_user_id, target_id, details, member_ids from admin_audit_log where ${where} order by id`);

describe("erasure of a member named in the admin audit log", () => {
  it("rewrites every entry naming the member, in its target or in its details' free text, and no other", async () => {
    const clock = fixedClock(Date.now());
    const kv = createMemoryStore({ clock });
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE, clock, kv });
    const [gone, friend, other, admin] = [await signIn(t, env.issuer), await signIn(t, env.issuer), await signIn(t, env.issuer), await signIn(t, env.issuer, { admin: true })];
    // A second apart, so the entries' ids sort in this order.
    for (const [to, reason] of [[gone.id, "welcome bonus"], [friend.id, `goodwill after ${gone.id} reported them`], [friend.id, `refund for ${other.id}`]] as const) {
      await award(t, admin, to, 1, reason);
      clock.advance(1000);
    }
    const byAdmin = sql`actor_user_id = ${admin.id}`;
    const before = await entries(byAdmin);
    expect(before.map((e) => e.member_ids)).toEqual([[gone.id], [friend.id, gone.id], [friend.id, other.id]]);

    expect((await t.request("/api/v1/account", { ...json({ confirm: "DELETE" }, gone.headers), method: "DELETE" })).status).toBe(200);
    clock.advance(GRACE_MS + HOUR);
    expect(await eraseDeletedAccounts({ db: db(), kv, ids: t.deps.ids, logger: t.deps.logger }, clock.now())).toBe(1);

    const after = await entries(byAdmin);
    const tomb = after[0]!.target_id;
    expect(tomb).toMatch(/^tmb_/);
    expect(after[0]).toMatchObject({ details: { reason: "welcome bonus" }, member_ids: [] });
    expect(after[1]).toMatchObject({ target_id: friend.id, details: { reason: `goodwill after ${tomb} reported them` }, member_ids: [friend.id] });
    expect(after[2]).toEqual(before[2]);
    expect(await entries(sql`strpos(admin_audit_log::text, ${gone.id}) > 0`)).toEqual([]);
  });

  it("finds a member whose id has another shape by reading the whole log", async () => {
    const now = Date.now();
    const clock = fixedClock(now);
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE, clock });
    const [made, bystander] = [`hand-made-${randomSuffix()}`, `hand-made-${randomSuffix()}`];
    await db().execute(sql`insert into users (id, subject, deleted_at) values (${made}, ${`subject-${made}`}, ${new Date(now - GRACE_MS - HOUR).toISOString()}::timestamptz)`);
    await db().execute(sql`insert into users (id, subject) values (${bystander}, ${`subject-${bystander}`})`);
    const admin = await signIn(t, env.issuer, { admin: true });
    const written = [[`tkt_${randomSuffix()}`, `asked on behalf of ${made}`], [made, "closed"], [`tkt_${randomSuffix()}`, `asked on behalf of ${bystander}`]];
    for (const [i, [target, note]] of written.entries()) {
      await db().execute(sql`insert into admin_audit_log (id, actor_user_id, credential, action, target_type, target_id, request_id, details, created_at)
        values (${`aud_${i}${randomSuffix()}`}, ${admin.id}, 'token', 'support_ticket.resolve', 'support_ticket', ${target}, 'req_1', ${JSON.stringify({ note })}::jsonb, now())`);
    }

    expect(await eraseMember({ db: db(), kv: t.deps.kv, ids: t.deps.ids, logger: t.deps.logger }, made, now)).toBe(true);
    const left = await entries(sql`actor_user_id = ${admin.id}`);
    expect(left.map((e) => e.details.note)).toEqual([expect.stringMatching(/^asked on behalf of tmb_/), "closed", `asked on behalf of ${bystander}`]);
    expect(left[1]!.target_id).toMatch(/^tmb_/);
  });
});
