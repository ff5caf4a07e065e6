import { afterEach, describe, expect, it } from "vitest";
import { fixedClock } from "../../src/platform/clock";
import { paymentDepsOf } from "../../src/services/payments/context";
import { reconcilePayments } from "../../src/services/payments/reconcile";
import { buildTestApp, type TestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { ENTERPRISE, signIn, type Person } from "../support/people";
import { balanceOf, creditsOf, expectLedgerBalanced, paymentRow, useProviders } from "../support/payments";
import { json } from "../support/users";

// Lost webhooks and abandoned checkouts: the scheduled pass asks each provider and settles.

const env = useTestEnvironment();
const providers = useProviders();
const db = () => env.db.database.db;
afterEach(async () => {
  await expectLedgerBalanced(db());
});

const MINUTE = 60_000;
const post = (t: TestApp, who: Person, path: string, body: unknown) => t.request(path, json(body, who.headers)).then((r) => r.json() as Promise<Record<string, string>>);

function setup() {
  // Frozen at a whole second near now: the test's access tokens are valid on this clock.
  const clock = fixedClock(Math.floor(Date.now() / 1000) * 1000);
  const t = buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE, env: providers.current.env, clock });
  return { clock, t, reconcile: () => reconcilePayments(paymentDepsOf(t.deps, db())) };
}

describe("payment reconciliation", () => {
  it("credits payments whose notification was lost, leaves unpaid ones, and expires stale ones", async () => {
    const { clock, t, reconcile } = setup();
    const me = await signIn(t, env.issuer);
    const p = providers.current;
    const cardA = (await post(t, me, "/api/payments/card-a/checkout", { amount: 400 })).fundingRequestId as string;
    const cardBPaid = (await post(t, me, "/api/v1/payments/card-b/card-collection", { amount: 5, phoneNumber: "+15550100", email: "p@example.test" })).transactionId as string;
    const cardBUnpaid = (await post(t, me, "/api/v1/payments/card-b/card-collection", { amount: 6, phoneNumber: "+15550100", email: "p@example.test" })).transactionId as string;
    const cryptoPaid = (await post(t, me, "/api/payments/crypto/create", { amount: 7, currency: "USDC" })).paymentId as string;
    const cryptoUnpaid = (await post(t, me, "/api/payments/crypto/create", { amount: 8, currency: "USDC" })).paymentId as string;
    const mobile = await post(t, me, "/api/v1/mobile-money/stk-push", { phoneNumber: "0712345678", amount: 900 });
    const mobileWaiting = await post(t, me, "/api/v1/mobile-money/stk-push", { phoneNumber: "0712345678", amount: 950 });
    p.cardB.pay(cardBPaid);
    p.crypto.setStatus(cryptoPaid, "finished");
    p.mobile.complete(mobile.checkoutRequestId as string, 0);

    // Too young: nothing is asked yet.
    expect(await reconcile()).toMatchObject({ checked: 0 });

    clock.advance(16 * MINUTE);
    await reconcile();
    const state = async (id: string) => (await paymentRow(db(), id)).status;
    expect(await state(cardBPaid)).toBe("completed");
    expect(await state(cryptoPaid)).toBe("completed");
    expect(await state(mobile.requestId as string)).toBe("completed");
    for (const id of [cardA, cardBUnpaid, cryptoUnpaid, mobileWaiting.requestId as string]) expect(await state(id)).toBe("pending");
    expect(await balanceOf(db(), me.id)).toBe(500 + 700 + 900);

    // A second pass changes nothing that is settled.
    await reconcile();
    for (const id of [cardBPaid, cryptoPaid, mobile.requestId as string]) expect(await creditsOf(db(), id)).toBe(1);

    // Past the crypto intent's hour it expires; past a day everything still unpaid does.
    clock.advance(50 * MINUTE);
    await reconcile();
    expect(await state(cryptoUnpaid)).toBe("expired");
    expect(await state(cardBUnpaid)).toBe("pending");
    clock.advance(24 * 60 * MINUTE);
    await reconcile();
    for (const id of [cardA, cardBUnpaid, mobileWaiting.requestId as string]) expect(await state(id)).toBe("expired");
    expect(await balanceOf(db(), me.id)).toBe(2100);
  });

  it("credits once when passes run at the same time as the webhook", async () => {
    const { clock, t, reconcile } = setup();
    const me = await signIn(t, env.issuer);
    const p = providers.current;
    const ids = await Promise.all(
      Array.from({ length: 5 }, async () => (await post(t, me, "/api/v1/payments/card-b/card-collection", { amount: 10, phoneNumber: "+15550100", email: "p@example.test" })).transactionId as string),
    );
    const txs = ids.map((id) => p.cardB.pay(id));
    clock.advance(16 * MINUTE);
    await Promise.all([
      reconcile(),
      reconcile(),
      reconcile(),
      ...txs.map((tx) => {
        const hook = p.cardB.webhook(tx);
        return t.request(hook.path, { method: "POST", headers: { "content-type": "application/json", ...hook.headers }, body: hook.body });
      }),
    ]);
    for (const id of ids) {
      expect(await creditsOf(db(), id)).toBe(1);
      expect((await paymentRow(db(), id)).status).toBe("completed");
    }
    expect(await balanceOf(db(), me.id)).toBe(5 * 1000);
  });

  it("skips a provider that cannot be reached and tries again on the next pass", async () => {
    const { clock, t, reconcile } = setup();
    const me = await signIn(t, env.issuer);
    const id = (await post(t, me, "/api/payments/crypto/create", { amount: 9, currency: "ETH" })).paymentId as string;
    providers.current.crypto.setStatus(id, "finished");
    clock.advance(16 * MINUTE);
    providers.current.crypto.mode = "error";
    try {
      const report = await reconcile();
      expect(report.errors).toBeGreaterThan(0);
      expect((await paymentRow(db(), id)).status).toBe("pending");
    } finally {
      providers.current.crypto.mode = "ok";
    }
    await reconcile();
    expect((await paymentRow(db(), id)).status).toBe("completed");
  });
});
