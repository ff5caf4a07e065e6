import { sql } from "drizzle-orm";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { queryRows } from "../../src/db/rows";
import { ledgerInvariants } from "../../src/services/wallet/ledger";
import { buildTestApp, type TestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { ENTERPRISE, award, signIn, transfer, walletRow, type Person } from "../support/people";
import { json } from "../support/users";

const env = useTestEnvironment();
let t: TestApp;

beforeAll(() => {
  t = buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE });
});
afterEach(async () => {
  expect(await ledgerInvariants(env.db.database.db)).toEqual({ totalBalance: 0, mismatchedAccounts: 0 });
});

const person = (options: { admin?: boolean } = {}): Promise<Person> => signIn(t, env.issuer, options);
const UNKNOWN = "usr_00000000000000000000000000";

async function giveProfile(p: Person, visibility: "visible" | "hidden" = "visible"): Promise<void> {
  await env.db.database.db.execute(
    sql`insert into profiles (user_id, display_name, birth_date, gender, interested_in, city, visibility, created_at, updated_at, last_active_at)
        values (${p.id}, 'Someone', '1995-06-15', 'woman', '{man}', 'Lisbon', ${visibility}, now(), now(), now())`,
  );
}

async function block(blocker: Person, blocked: Person): Promise<void> {
  await env.db.database.db.execute(sql`insert into blocks (blocker_id, blocked_id, created_at) values (${blocker.id}, ${blocked.id}, now())`);
}

/** Status and body of an answer, without the request id, which differs on every request by design. */
async function answer(res: Promise<Response>): Promise<{ status: number; body: Record<string, unknown> }> {
  const r = await res;
  const { requestId, ...body } = (await r.json()) as Record<string, unknown>;
  if (r.status >= 400) expect(requestId).toEqual(expect.any(String));
  return { status: r.status, body };
}

/** Every member route that acts on another member by id, as `me` acting on `target`. */
const ROUTES: Record<string, (me: Person, target: string) => Promise<Response>> = {
  "wallet transfer": (me, target) => transfer(t, me, { toUserId: target, amount: 5, note: "hi" }),
  "like": (me, target) => t.request("/api/matching/swipe", json({ targetUserId: target, action: "like" }, me.headers)),
  "pass": (me, target) => t.request("/api/matching/swipe", json({ targetUserId: target, action: "pass" }, me.headers)),
  "swipe wink": (me, target) => t.request("/api/matching/swipe", json({ targetUserId: target, action: "wink" }, me.headers)),
  "wink": (me, target) => t.request("/api/v1/winks", json({ toUserId: target, message: "hello" }, me.headers)),
  "profile read": (me, target) => t.request(`/api/v1/profile/${target}`, { headers: me.headers }),
};

describe("one visibility rule: hidden and blocked members answer as unknown ids", () => {
  for (const [name, call] of Object.entries(ROUTES)) {
    it(`${name}: a hidden member, a block either way and an unknown id get the identical 404; a visible member is reachable`, async () => {
      const admin = await person({ admin: true });
      const [me, hidden, blockedByMe, blockedMe, visible] = [await person(), await person(), await person(), await person(), await person()];
      await giveProfile(me);
      await giveProfile(hidden, "hidden");
      for (const p of [blockedByMe, blockedMe, visible]) await giveProfile(p);
      await block(me, blockedByMe);
      await block(blockedMe, me);
      await award(t, admin, me.id, 100);

      const unknown = await answer(call(me, UNKNOWN));
      expect(unknown).toEqual({ status: 404, body: { error: "not_found", code: 404, message: expect.any(String) } });
      for (const target of [hidden, blockedByMe, blockedMe]) expect(await answer(call(me, target.id))).toEqual(unknown);

      // Nothing reached them: no coins, no swipe, no wink.
      for (const target of [hidden, blockedByMe, blockedMe]) expect((await walletRow(env.db.database.db, target.id))?.balance ?? 0).toBe(0);
      const [row] = await queryRows<{ n: number }>(
        env.db.database.db,
        sql`select ((select count(*) from swipes where swiper_id = ${me.id}) + (select count(*) from winks where sender_id = ${me.id}))::int as n`,
      );
      expect(row?.n).toBe(0);

      // The control: the same call reaches a visible member without a block.
      const reached = await call(me, visible.id);
      expect(reached.status, await reached.clone().text()).toBeLessThan(300);
    });
  }

  it("a member who shows their profile again is reachable again, and one who hides becomes unknown at once", async () => {
    const admin = await person({ admin: true });
    const [me, other] = [await person(), await person()];
    await giveProfile(other);
    await award(t, admin, me.id, 10);
    expect((await transfer(t, me, { toUserId: other.id, amount: 1 })).status).toBe(200);
    await env.db.database.db.execute(sql`update profiles set visibility = 'hidden' where user_id = ${other.id}`);
    expect(await answer(transfer(t, me, { toUserId: other.id, amount: 1 }))).toEqual(await answer(transfer(t, me, { toUserId: UNKNOWN, amount: 1 })));
    await env.db.database.db.execute(sql`update profiles set visibility = 'visible' where user_id = ${other.id}`);
    expect((await transfer(t, me, { toUserId: other.id, amount: 1 })).status).toBe(200);
    expect((await walletRow(env.db.database.db, other.id))?.balance).toBe(2);
  });

  it("a hidden member still sees their own profile, and can still send to a visible one", async () => {
    const admin = await person({ admin: true });
    const [me, other] = [await person(), await person()];
    await giveProfile(me, "hidden");
    await giveProfile(other);
    await award(t, admin, me.id, 10);
    expect((await t.request(`/api/v1/profile/${me.id}`, { headers: me.headers })).status).toBe(200);
    expect((await transfer(t, me, { toUserId: other.id, amount: 3 })).status).toBe(200);
  });
});
