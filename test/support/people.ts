import { sql } from "drizzle-orm";
import { expect } from "vitest";
import type { Db } from "../../src/db/port";
import { queryRows } from "../../src/db/rows";
import type { TierLookup } from "../../src/services/tiers/port";
import type { TestApp } from "./app";
import type { TestIssuer } from "./issuer";
import { json, newUser, type TestUser } from "./users";

/** Every caller on the enterprise tier (2,000 requests a minute), so busy tests are not rate limited. */
export const ENTERPRISE: TierLookup = { tierOf: async () => ({ tier: "enterprise", until: null }) };

/** A user who has made a request, and so has a row in the database: `id` is their `usr_…` id. */
export interface Person extends TestUser {
  id: string;
}

/** The user's id, learnt from `GET /v1/auth/test`, which creates the user on their first request. */
export async function idOf(t: TestApp, user: TestUser): Promise<string> {
  const res = await t.request("/v1/auth/test", { headers: user.headers });
  expect(res.status).toBe(200);
  return ((await res.json()) as { user: { id: string } }).user.id;
}

/** A new user, created in the database by their first request. */
export async function signIn(t: TestApp, issuer: TestIssuer, options: { admin?: boolean } = {}): Promise<Person> {
  const user = await newUser(issuer, options);
  return { ...user, id: await idOf(t, user) };
}

/** An admin awards coins from the mint; anything but 200 fails the test. */
export async function award(t: TestApp, admin: TestUser, userId: string, amount: number, reason = "test award"): Promise<void> {
  const res = await t.request("/api/v1/wallet/coins/award", json({ userId, amount, reason }, admin.headers));
  expect(res.status, await res.clone().text()).toBe(200);
}

export const transfer = (t: TestApp, from: TestUser, body: unknown, headers: Record<string, string> = {}) =>
  t.request("/api/v1/wallet/transfer", json(body, { ...from.headers, ...headers }));

export interface Overview {
  walletId: string;
  userId: string;
  balance: number;
  coins: number;
  tier: string;
}

export async function overview(t: TestApp, user: TestUser): Promise<Overview> {
  const res = await t.request("/api/v1/wallet/overview", { headers: user.headers });
  expect(res.status).toBe(200);
  return (await res.json()) as Overview;
}

/** Straight from the database: the user's wallet and its number of postings; undefined without a wallet. */
export async function walletRow(db: Db, userId: string): Promise<{ id: string; balance: number; postings: number } | undefined> {
  const [row] = await queryRows<{ id: string; balance: string; postings: string }>(
    db,
    sql`select a.id, a.balance::text as balance, (select count(*)::text from ledger_postings p where p.account_id = a.id) as postings
        from ledger_accounts a where a.user_id = ${userId}`,
  );
  return row && { id: row.id, balance: Number(row.balance), postings: Number(row.postings) };
}
