import { sql } from "drizzle-orm";
import { afterAll, beforeAll, expect } from "vitest";
import type { Db } from "../../src/db/port";
import { queryRows } from "../../src/db/rows";
import { ledgerInvariants } from "../../src/services/wallet/ledger";
import type { TestApp } from "./app";
import { startCardAFake, type CardAFake } from "./providers/card-a";
import { startCardBFake, type CardBFake } from "./providers/card-b";
import { startCryptoFake, type CryptoFake } from "./providers/crypto";
import { deliveryInit, type Delivery } from "./providers/fake-server";
import { startMobileMoneyFake, type MobileMoneyFake } from "./providers/mobile-money";

export interface Providers {
  cardA: CardAFake;
  cardB: CardBFake;
  crypto: CryptoFake;
  mobile: MobileMoneyFake;
  /** Every provider configured, plus the rates and a short provider timeout for tests. */
  env: Record<string, string>;
}

/** The rate table of the tests: KES at 0.01 US dollars, so 100 KES = 100 coins. */
export const TEST_RATES = "KES=0.01,EUR=1.1,NGN=0.001";

/** All four provider fakes for the enclosing file, each on its own loopback port. */
export function useProviders(): { readonly current: Providers } {
  let current: Providers | undefined;
  beforeAll(async () => {
    const [cardA, cardB, crypto, mobile] = await Promise.all([startCardAFake(), startCardBFake(), startCryptoFake(), startMobileMoneyFake()]);
    current = {
      cardA,
      cardB,
      crypto,
      mobile,
      env: { ...cardA.env, ...cardB.env, ...crypto.env, ...mobile.env, PAYMENT_FX_RATES: TEST_RATES, PAYMENT_PROVIDER_TIMEOUT_MS: "400", PAYMENTS_PUBLIC_URL: "https://api.example.test" },
    };
  });
  afterAll(async () => {
    if (current) await Promise.all([current.cardA.close(), current.cardB.close(), current.crypto.close(), current.mobile.close()]);
  });
  return {
    get current() {
      if (!current) throw new Error("providers start in beforeAll");
      return current;
    },
  };
}

export const deliver = (t: TestApp, d: Delivery, headers?: Record<string, string>) => t.request(d.path, deliveryInit(d, headers));

export async function balanceOf(db: Db, userId: string): Promise<number> {
  const [row] = await queryRows<{ balance: string }>(db, sql`select balance::text as balance from ledger_accounts where user_id = ${userId}`);
  return Number(row?.balance ?? 0);
}

/** Funding credits of one payment in the ledger (its external reference is the payment id). */
export async function creditsOf(db: Db, paymentId: string): Promise<number> {
  const [row] = await queryRows<{ n: string }>(db, sql`select count(*)::text as n from ledger_transactions where type = 'funding' and external_ref = ${`payment:${paymentId}`}`);
  return Number(row?.n ?? 0);
}

export async function paymentRow(
  db: Db,
  id: string,
): Promise<{ status: string; coins: number; failure_reason: string | null; provider_ref: string | null; review_reason: string | null }> {
  const [row] = await queryRows<{ status: string; coins: string; failure_reason: string | null; provider_ref: string | null; review_reason: string | null }>(
    db,
    sql`select status, coins::text as coins, failure_reason, provider_ref, review_reason from payments where id = ${id}`,
  );
  if (!row) throw new Error(`no payment ${id}`);
  return { ...row, coins: Number(row.coins) };
}

export async function expectLedgerBalanced(db: Db): Promise<void> {
  expect(await ledgerInvariants(db)).toEqual({ totalBalance: 0, mismatchedAccounts: 0 });
}

/** Error lines of one message a test app wrote (the review messages of src/services/payments/store.ts). */
export const errorsNamed = (t: TestApp, msg: string) => t.logs.filter((l) => l.level === "error" && l.msg === msg);
