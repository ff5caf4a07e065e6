import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import type { Db } from "../../src/db/port";
import { users } from "../../src/db/schema";
import { fixedClock } from "../../src/platform/clock";
import { IDENTITY_FRESH_MS, IDENTITY_STALE_MS } from "../../src/services/users/ensure-user";
import { buildTestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { randomSuffix } from "../support/services";

const env = useTestEnvironment();

const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });
type Who = { user: { id: string; email: string; role: string } };

describe("remembered identities", () => {
  async function setup() {
    const start = Date.now();
    const clock = fixedClock(start);
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer, clock });
    const sub = `u-${randomSuffix()}`;
    const [before, after] = await Promise.all(
      ["before", "after"].map((name) => env.issuer.sign({ sub, email: `${name}-${sub}@example.test` }, { expiresIn: Math.floor(start / 1000) + 7_200 })),
    );
    const who = async (token: string) => {
      const res = await t.request("/v1/auth/test", bearer(token as string));
      expect(res.status).toBe(200);
      return ((await res.json()) as Who).user;
    };
    const stored = async () => (await env.db.database.db.select({ email: users.email, lastSeenAt: users.lastSeenAt }).from(users).where(eq(users.subject, sub)))[0];
    return { clock, sub, before: before as string, after: after as string, who, stored, start };
  }

  it("write and answer a changed email at once: the token's email is part of what is remembered", async () => {
    const s = await setup();
    const first = await s.who(s.before);
    expect(first.email).toBe(`before-${s.sub}@example.test`);
    expect(await s.who(s.after)).toMatchObject({ id: first.id, email: `after-${s.sub}@example.test` });
    expect((await s.stored())?.email).toBe(`after-${s.sub}@example.test`);
  });

  it("answer a stale identity at once and run the upsert behind it, so the last-seen time moves on", async () => {
    const s = await setup();
    const first = await s.who(s.before);
    expect((await s.stored())?.lastSeenAt?.getTime()).toBe(s.start);
    // Fresh (lifetimes are drawn from the last fifth of IDENTITY_FRESH_MS): no database round trip,
    // so the last-seen time stays.
    s.clock.advance(IDENTITY_FRESH_MS * 0.8 - 1);
    await s.who(s.before);
    expect((await s.stored())?.lastSeenAt?.getTime()).toBe(s.start);

    s.clock.set(s.start + IDENTITY_FRESH_MS + 1);
    expect(await s.who(s.before)).toMatchObject({ id: first.id });
    await expect.poll(async () => (await s.stored())?.lastSeenAt?.getTime(), { timeout: 5_000 }).toBe(s.start + IDENTITY_FRESH_MS + 1);
  });

  it("make the caller wait for the upsert once the identity is past the stale window", async () => {
    const s = await setup();
    const first = await s.who(s.before);
    s.clock.advance(IDENTITY_FRESH_MS + IDENTITY_STALE_MS + 1);
    expect(await s.who(s.before)).toMatchObject({ id: first.id });
    // Written before the answer, not behind it.
    expect((await s.stored())?.lastSeenAt?.getTime()).toBe(s.start + IDENTITY_FRESH_MS + IDENTITY_STALE_MS + 1);
  });

  it("look a changed role up at once: the role is part of what is remembered", async () => {
    const s = await setup();
    const asUser = await s.who(s.before);
    // Issued a second later: a token of the same second as the member token would not promote (role-order.test.ts).
    const adminToken = await env.issuer.sign({ sub: s.sub, roles: ["admin"] }, { expiresIn: Math.floor(s.start / 1000) + 7_200, issuedAt: Math.floor(Date.now() / 1000) + 1 });
    const asAdmin = await s.who(adminToken);
    expect(asAdmin).toMatchObject({ id: asUser.id, role: "admin" });
  });
});

/** The same database, with every insert (the identity upsert) answering 50 ms late. */
function slowWrites(db: Db): Db {
  const late = <T extends object>(target: T): T =>
    new Proxy(target, {
      get(obj, key) {
        const value = Reflect.get(obj, key, obj) as unknown;
        if (key === "then" && typeof value === "function") {
          return (ok: (v: unknown) => unknown, fail: (e: unknown) => unknown) =>
            new Promise((resolve) => setTimeout(resolve, 50)).then(() => (value as PromiseLike<unknown>["then"]).call(obj, ok, fail));
        }
        if (typeof value !== "function") return value;
        return (...args: unknown[]) => {
          const out = (value as (...a: unknown[]) => unknown).apply(obj, args);
          return out !== null && typeof out === "object" ? late(out) : out;
        };
      },
    });
  return new Proxy(db, { get: (obj, key) => (key === "insert" ? (...args: Parameters<Db["insert"]>) => late(obj.insert(...args)) : Reflect.get(obj, key, obj)) });
}

describe("a refresh behind the answer", () => {
  it("finishes on the request's database session before the session is released", async () => {
    // Workers give each request a session of its own and end it with the request; here every
    // release records what the refresh had written by then.
    const seenAtRelease: (number | undefined)[] = [];
    const start = Date.now();
    const clock = fixedClock(start);
    const sub = `u-${randomSuffix()}`;
    const storedSeen = async () => (await env.db.database.db.select({ at: users.lastSeenAt }).from(users).where(eq(users.subject, sub)))[0]?.at?.getTime();
    const database = {
      driver: env.db.database.driver,
      close: async () => {},
      session: () => ({ db: slowWrites(env.db.database.db), release: async () => void seenAtRelease.push(await storedSeen()) }),
    };
    const t = buildTestApp({ database, issuer: env.issuer, clock });
    const token = await env.issuer.sign({ sub, email: `${sub}@example.test` }, { expiresIn: Math.floor(start / 1000) + 7_200 });
    expect((await t.request("/v1/auth/test", bearer(token))).status).toBe(200);
    await expect.poll(() => seenAtRelease.length, { timeout: 5_000 }).toBe(1);

    clock.advance(IDENTITY_FRESH_MS + 1);
    expect((await t.request("/v1/auth/test", bearer(token))).status).toBe(200);
    await expect.poll(() => seenAtRelease.length, { timeout: 5_000 }).toBe(2);
    expect(seenAtRelease[1]).toBe(start + IDENTITY_FRESH_MS + 1);
  });
});
