import { sql } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { queryRows } from "../../src/db/rows";
import { fixedClock } from "../../src/platform/clock";
import { paymentDepsOf } from "../../src/services/payments/context";
import { reconcilePayments } from "../../src/services/payments/reconcile";
import { REVIEW_MESSAGES } from "../../src/services/payments/store";
import { buildTestApp, type TestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { ENTERPRISE, signIn, type Person } from "../support/people";
import { balanceOf, creditsOf, deliver, errorsNamed, expectLedgerBalanced, paymentRow, useProviders } from "../support/payments";
import { json } from "../support/users";

// Lost webhooks and abandoned checkouts: the scheduled pass asks each provider and settles.

const env = useTestEnvironment();
const providers = useProviders();
const db = () => env.db.database.db;
afterEach(async () => {
  await expectLedgerBalanced(db());
  // Each test counts what its passes ask about: nothing a test left unsettled is due in the next
  // (failed and expired payments are asked about for a day after they were made).
  await queryRows(db(), sql`update payments set status = 'expired', created_at = created_at - interval '30 days' where status <> 'completed' returning id`);
});

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const post = (t: TestApp, who: Person, path: string, body: unknown) => t.request(path, json(body, who.headers)).then((r) => r.json() as Promise<Record<string, string>>);
const resultOf = async (res: Response) => {
  expect(res.status, await res.clone().text()).toBe(200);
  return ((await res.json()) as { result: string }).result;
};

/**
 * `n` pending payments of a provider made `createdAt` and never paid, written straight to the table
 * (a backlog as traffic leaves it); crypto ones carry a provider payment id, so they are asked about.
 */
async function backlog(provider: "card-a" | "card-b" | "crypto", userId: string, n: number, createdAt: Date): Promise<string[]> {
  const prefix = { "card-a": "fund_backlog", "card-b": "cbtx_backlog", crypto: "cpay_backlog" }[provider];
  const batch = crypto.randomUUID();
  const rows = await queryRows<{ id: string }>(
    db(),
    sql`insert into payments (id, provider, user_id, status, amount, currency, coins, provider_ref, created_at, updated_at)
        select ${prefix} || '_' || ${batch} || '_' || g, ${provider}, ${userId}, 'pending', 500, 'USD', 500,
               case when ${provider} = 'crypto' then ${batch} || g end,
               ${createdAt.toISOString()}::timestamptz, ${createdAt.toISOString()}::timestamptz
        from generate_series(1, ${n}) g
        returning id`,
  );
  return rows.map((r) => r.id);
}

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

  it("expires card-a requests without asking, so a backlog of them never holds up the payments that are asked about", async () => {
    const { clock, t, reconcile } = setup();
    const me = await signIn(t, env.issuer);
    const p = providers.current;
    // More abandoned checkouts than one pass asks about, all older than the payment that was paid.
    const abandoned = await backlog("card-a", me.id, 250, new Date(clock.now() - HOUR));
    const paidCardA = (await post(t, me, "/api/payments/card-a/checkout", { amount: 300 })).fundingRequestId as string;
    const lateCardA = (await post(t, me, "/api/payments/card-a/checkout", { amount: 400 })).fundingRequestId as string;
    expect((await deliver(t, p.cardA.orderWebhook(paidCardA))).status).toBe(200);
    const cardB = (await post(t, me, "/api/v1/payments/card-b/card-collection", { amount: 5, phoneNumber: "+15550100", email: "p@example.test" })).transactionId as string;
    p.cardB.pay(cardB); // its webhook is lost

    clock.advance(16 * MINUTE);
    expect(await reconcile()).toMatchObject({ checked: 1, credited: 1, expired: 0 });
    expect((await paymentRow(db(), cardB)).status).toBe("completed");
    expect((await paymentRow(db(), abandoned[0] as string)).status).toBe("pending");

    // A day on, one pass expires every pending card-a request in one statement; completed ones stay.
    clock.advance(24 * HOUR);
    const report = await reconcile();
    expect(report).toMatchObject({ checked: 0, expired: 251 });
    const states = await queryRows<{ status: string; n: number }>(db(), sql`select status, count(*)::int as n from payments where id in ${[...abandoned, lateCardA]} group by status`);
    expect(states).toEqual([{ status: "expired", n: 251 }]);
    expect(await paymentRow(db(), paidCardA)).toMatchObject({ status: "completed" });
    // The provider's order webhook for an expired request still credits it: the payer was charged.
    const order = await deliver(t, p.cardA.orderWebhook(lateCardA));
    expect(await order.json()).toEqual({ received: true, result: "credited" });
    expect(await balanceOf(db(), me.id)).toBe(300 + 500 + 400);
  });

  it("works through a backlog larger than one pass, least recently asked first, so every due payment is asked", async () => {
    const { clock, t, reconcile } = setup();
    const me = await signIn(t, env.issuer);
    const p = providers.current;
    // 201 card-b links nobody paid (the provider knows no transaction for them), older than the intent.
    const unanswered = await backlog("card-b", me.id, 201, new Date(clock.now() - HOUR));
    const intent = (await post(t, me, "/api/payments/crypto/create", { amount: 25, currency: "USDT" })).paymentId as string;
    clock.advance(5 * MINUTE);
    p.crypto.setStatus(intent, "finished"); // its notification is lost

    clock.advance(11 * MINUTE);
    expect(await reconcile()).toMatchObject({ checked: 200, credited: 0 });
    expect((await paymentRow(db(), intent)).status).toBe("pending");
    // The next pass takes the ones not asked yet before asking the first 200 again.
    clock.advance(5 * MINUTE);
    expect(await reconcile()).toMatchObject({ checked: 200, credited: 1 });
    expect(await paymentRow(db(), intent)).toMatchObject({ status: "completed" });
    expect(await balanceOf(db(), me.id)).toBe(2500);
    const neverAsked = await queryRows(db(), sql`select id from payments where id in ${unanswered} and reconciled_at is null`);
    expect(neverAsked).toEqual([]);
    const asked = p.cardB.requests.filter((r) => r.path === "/v3/transactions/verify_by_reference" && unanswered.includes(r.query.get("tx_ref") ?? ""));
    expect(new Set(asked.map((r) => r.query.get("tx_ref"))).size).toBe(201);
  });

  it("credits a crypto payment that finished though the pass that finds it comes after expiresAt, and expires one nothing was sent to", async () => {
    const { clock, t, reconcile } = setup();
    const me = await signIn(t, env.issuer);
    const p = providers.current;
    const paid = (await post(t, me, "/api/payments/crypto/create", { amount: 12, currency: "USDT" })).paymentId as string;
    const confirming = (await post(t, me, "/api/payments/crypto/create", { amount: 13, currency: "USDT" })).paymentId as string;
    const unpaid = (await post(t, me, "/api/payments/crypto/create", { amount: 14, currency: "USDT" })).paymentId as string;
    p.crypto.setStatus(paid, "finished");
    p.crypto.setStatus(confirming, "confirming");

    // The first pass that runs is past the intents' hour.
    clock.advance(61 * MINUTE);
    expect(await reconcile()).toMatchObject({ checked: 3, credited: 1, expired: 1, unchanged: 1 });
    expect(await paymentRow(db(), paid)).toMatchObject({ status: "completed" });
    expect(await paymentRow(db(), unpaid)).toMatchObject({ status: "expired", failure_reason: "intent expired" });
    // Money on its way keeps the intent pending and asked about; it credits when it finishes.
    expect(await paymentRow(db(), confirming)).toMatchObject({ status: "pending" });
    p.crypto.setStatus(confirming, "finished");
    clock.advance(5 * MINUTE);
    // The expired intent is asked about too: coins may still arrive for it.
    expect(await reconcile()).toMatchObject({ checked: 2, credited: 1, unchanged: 1 });
    expect(await balanceOf(db(), me.id)).toBe(1200 + 1300);
  });

  it("asks about a card-b payment that failed within a day, and credits a later successful attempt on its link", async () => {
    const { clock, t, reconcile } = setup();
    const me = await signIn(t, env.issuer);
    const p = providers.current;
    const retried = (await post(t, me, "/api/v1/payments/card-b/card-collection", { amount: 25, phoneNumber: "+15550100", email: "p@example.test" })).transactionId as string;
    const failedOnce = await deliver(t, p.cardB.webhook(p.cardB.pay(retried, { status: "failed" })));
    expect(await failedOnce.json()).toEqual({ received: true, result: "failed" });
    p.cardB.pay(retried); // the payer tried again and paid; that webhook is lost

    clock.advance(16 * MINUTE);
    expect(await reconcile()).toMatchObject({ checked: 1, credited: 1 });
    expect(await paymentRow(db(), retried)).toMatchObject({ status: "completed" });
    expect(await balanceOf(db(), me.id)).toBe(2500);

    // A failed payment older than PAYMENT_EXPIRE_AFTER_SECONDS is no longer asked about.
    const old = (await post(t, me, "/api/v1/payments/card-b/card-collection", { amount: 30, phoneNumber: "+15550100", email: "p@example.test" })).transactionId as string;
    await deliver(t, p.cardB.webhook(p.cardB.pay(old, { status: "failed" })));
    clock.advance(24 * HOUR + MINUTE);
    const asked = () => p.cardB.requests.filter((r) => r.query.get("tx_ref") === old).length;
    const before = asked();
    expect(await reconcile()).toMatchObject({ checked: 0 });
    expect(asked()).toBe(before);
    expect((await paymentRow(db(), old)).status).toBe("failed");
  });

  it("never lets a late 'waiting' notification expire an intent whose coins are confirming, and credits it once when the 'finished' one is lost", async () => {
    const { clock, t, reconcile } = setup();
    const me = await signIn(t, env.issuer);
    const crypto = providers.current.crypto;
    const intent = (await post(t, me, "/api/payments/crypto/create", { amount: 20, currency: "USDT" })) as unknown as { paymentId: string; expiresAt: number };
    // The provider's first notification (waiting) did not reach us; it is redelivered later.
    const staleWaiting = crypto.ipn(intent.paymentId);
    crypto.setStatus(intent.paymentId, "confirming");
    clock.set(intent.expiresAt * 1000 + MINUTE);
    expect(await resultOf(await deliver(t, crypto.ipn(intent.paymentId)))).toBe("unchanged");
    expect(await resultOf(await deliver(t, staleWaiting))).toBe("unchanged");
    expect(await paymentRow(db(), intent.paymentId)).toMatchObject({ status: "pending" });
    // Asked while the network still confirms, the provider's answer keeps it pending.
    expect(await reconcile()).toMatchObject({ checked: 1, unchanged: 1, expired: 0 });

    crypto.setStatus(intent.paymentId, "finished"); // its notification is lost
    clock.advance(30 * MINUTE);
    expect(await reconcile()).toMatchObject({ checked: 1, credited: 1 });
    expect(await paymentRow(db(), intent.paymentId)).toMatchObject({ status: "completed" });
    expect(await resultOf(await deliver(t, crypto.ipn(intent.paymentId)))).toBe("unchanged");
    expect(await reconcile()).toMatchObject({ checked: 0 });
    expect(await creditsOf(db(), intent.paymentId)).toBe(1);
    expect(await balanceOf(db(), me.id)).toBe(2000);
  });

  it("keeps asking about a crypto intent it expired, so coins that arrive late credit once, until PAYMENT_EXPIRE_AFTER_SECONDS", async () => {
    const { clock, t, reconcile } = setup();
    const me = await signIn(t, env.issuer);
    const crypto = providers.current.crypto;
    const late = (await post(t, me, "/api/payments/crypto/create", { amount: 15, currency: "USDT" })).paymentId as string;
    const never = (await post(t, me, "/api/payments/crypto/create", { amount: 16, currency: "USDT" })).paymentId as string;
    clock.advance(61 * MINUTE);
    expect(await reconcile()).toMatchObject({ checked: 2, expired: 2 });
    expect(await paymentRow(db(), late)).toMatchObject({ status: "expired", failure_reason: "intent expired" });

    // The payer's coins reach the address after expiresAt; the provider finishes the payment at our
    // price, and its notification is lost.
    crypto.setStatus(late, "finished");
    clock.advance(5 * MINUTE);
    expect(await reconcile()).toMatchObject({ checked: 2, credited: 1, unchanged: 1 });
    expect(await paymentRow(db(), late)).toMatchObject({ status: "completed" });
    expect(await reconcile()).toMatchObject({ checked: 1, credited: 0, unchanged: 1 });
    expect(await creditsOf(db(), late)).toBe(1);
    expect(await balanceOf(db(), me.id)).toBe(1500);

    // A day after it was made, the intent nothing was sent to is no longer asked about.
    clock.advance(23 * HOUR);
    const asked = () => crypto.requests.filter((r) => r.path === `/v1/payment/${crypto.byOrder(never).payment_id}`).length;
    const before = asked();
    expect(await reconcile()).toMatchObject({ checked: 0 });
    expect(asked()).toBe(before);
    expect(await paymentRow(db(), never)).toMatchObject({ status: "expired" });
  });

  it("keeps asking about a mobile-money push the status query called failed, and credits it once when the provider then reports it paid", async () => {
    const { clock, t, reconcile } = setup();
    const me = await signIn(t, env.issuer);
    const mm = providers.current.mobile;
    const push = await post(t, me, "/api/v1/mobile-money/stk-push", { phoneNumber: "0712345678", amount: 700 });
    // 1037: the phone could not be reached in time, although the payer may still approve the prompt.
    mm.complete(push.checkoutRequestId as string, 1037);
    expect(await resultOf(await deliver(t, mm.callback(push.checkoutRequestId as string)))).toBe("failed");
    mm.complete(push.checkoutRequestId as string, 0);

    clock.advance(16 * MINUTE);
    expect(await reconcile()).toMatchObject({ checked: 1, credited: 1 });
    expect(await paymentRow(db(), push.requestId as string)).toMatchObject({ status: "completed" });
    expect(await reconcile()).toMatchObject({ checked: 0 });
    expect(await creditsOf(db(), push.requestId as string)).toBe(1);
    expect(await balanceOf(db(), me.id)).toBe(700);
  });

  it("records for a person, once, crypto money it expires without crediting: partly paid, paid at another price, or never confirmed", async () => {
    const { clock, t, reconcile } = setup();
    const me = await signIn(t, env.issuer);
    const crypto = providers.current.crypto;
    const partly = (await post(t, me, "/api/payments/crypto/create", { amount: 20, currency: "USDT" })).paymentId as string;
    const otherPrice = (await post(t, me, "/api/payments/crypto/create", { amount: 21, currency: "USDT" })).paymentId as string;
    const stuck = (await post(t, me, "/api/payments/crypto/create", { amount: 22, currency: "USDT" })).paymentId as string;
    const unpaid = (await post(t, me, "/api/payments/crypto/create", { amount: 23, currency: "USDT" })).paymentId as string;
    crypto.setStatus(partly, "partially_paid").actually_paid = 12;
    crypto.setStatus(otherPrice, "finished").price_amount = 19;
    crypto.setStatus(stuck, "confirming");
    // Their notifications say so, and change nothing while the money may still be completed.
    for (const id of [partly, otherPrice]) expect(await resultOf(await deliver(t, crypto.ipn(id)))).toBe("unchanged");
    clock.advance(2 * HOUR);
    await reconcile();
    expect(await paymentRow(db(), unpaid)).toMatchObject({ status: "expired", review_reason: null });
    for (const id of [partly, otherPrice, stuck]) expect(await paymentRow(db(), id)).toMatchObject({ status: "pending", review_reason: null });
    expect(errorsNamed(t, REVIEW_MESSAGES.not_credited)).toEqual([]);

    clock.advance(23 * HOUR);
    expect(await reconcile()).toMatchObject({ expired: 3 });
    const notes = {
      [partly]: "expired with money seen: partially paid (12 of 20 usdt)",
      [otherPrice]: "expired with money seen: finished at 19 usd, not the 21 usd quoted",
      [stuck]: "expired with money seen: money on its way, never finished",
    };
    for (const [id, note] of Object.entries(notes)) expect(await paymentRow(db(), id)).toMatchObject({ status: "expired", review_reason: `not_credited: ${note}` });
    expect(errorsNamed(t, REVIEW_MESSAGES.not_credited).map((l) => [l.paymentId, l.note]).sort()).toEqual(Object.entries(notes).sort());
    expect(await balanceOf(db(), me.id)).toBe(0);
    // An admin lists them from the table.
    const listed = await queryRows<{ id: string }>(db(), sql`select id from payments where user_id = ${me.id} and review_reason is not null order by review_flagged_at, id`);
    expect(listed.map((r) => r.id).sort()).toEqual([partly, otherPrice, stuck].sort());
  });

  it("records once an intent it expired that the provider then reports partly paid, however often it asks", async () => {
    const { clock, t, reconcile } = setup();
    const me = await signIn(t, env.issuer);
    const crypto = providers.current.crypto;
    const id = (await post(t, me, "/api/payments/crypto/create", { amount: 20, currency: "USDT" })).paymentId as string;
    clock.advance(61 * MINUTE);
    expect(await reconcile()).toMatchObject({ expired: 1 });
    crypto.setStatus(id, "partially_paid").actually_paid = 5;
    for (let pass = 0; pass < 3; pass++) {
      clock.advance(5 * MINUTE);
      expect(await reconcile()).toMatchObject({ checked: 1, unchanged: 1 });
    }
    expect(await paymentRow(db(), id)).toMatchObject({ status: "expired", review_reason: "not_credited: expired, then partially paid (5 of 20 usdt)" });
    expect(errorsNamed(t, REVIEW_MESSAGES.not_credited)).toHaveLength(1);
  });

  it("takes the charge it credited, told again by a late webhook or callback, as no news (card-b, mobile money)", async () => {
    const { clock, t, reconcile } = setup();
    const me = await signIn(t, env.issuer);
    const { cardB, mobile } = providers.current;
    const id = (await post(t, me, "/api/v1/payments/card-b/card-collection", { amount: 9, phoneNumber: "+15550100", email: "p@example.test" })).transactionId as string;
    const push = await post(t, me, "/api/v1/mobile-money/stk-push", { phoneNumber: "0712345678", amount: 600 });
    const tx = cardB.pay(id);
    mobile.complete(push.checkoutRequestId as string, 0);
    clock.advance(16 * MINUTE);
    expect(await reconcile()).toMatchObject({ checked: 2, credited: 2 });
    expect(await resultOf(await deliver(t, cardB.webhook(tx)))).toBe("unchanged");
    expect(await resultOf(await deliver(t, mobile.callback(push.checkoutRequestId as string)))).toBe("unchanged");
    for (const paid of [id, push.requestId as string]) expect(await paymentRow(db(), paid)).toMatchObject({ status: "completed", review_reason: null });
    expect(errorsNamed(t, REVIEW_MESSAGES.second_payment)).toEqual([]);
    expect(await balanceOf(db(), me.id)).toBe(900 + 600);
  });

  it("stops asking at PAYMENT_RECONCILE_BUDGET_SECONDS, and the payments it did not ask keep their place for the next pass", async () => {
    const clock = fixedClock(Math.floor(Date.now() / 1000) * 1000);
    // Each question to card-b takes 25 s on the pass's clock.
    let slow = false;
    const fetchThroughProvider: typeof fetch = async (input, init) => {
      const answer = await fetch(input, init);
      if (slow && String(input).includes("/v3/transactions/verify_by_reference")) clock.advance(25_000);
      return answer;
    };
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE, env: { ...providers.current.env, PAYMENT_RECONCILE_BUDGET_SECONDS: "60" }, clock, fetch: fetchThroughProvider });
    const reconcile = () => reconcilePayments(paymentDepsOf(t.deps, db()));
    const me = await signIn(t, env.issuer);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await post(t, me, "/api/v1/payments/card-b/card-collection", { amount: 10 + i, phoneNumber: "+15550100", email: "p@example.test" })).transactionId as string);
      clock.advance(1_000);
    }
    providers.current.cardB.pay(ids[4] as string); // the newest one, whose webhook is lost, is paid
    clock.advance(16 * MINUTE);
    slow = true;
    const askedFor = () => providers.current.cardB.requests.filter((r) => r.path === "/v3/transactions/verify_by_reference").map((r) => r.query.get("tx_ref"));
    const before = askedFor().length;
    const passAt = clock.now();
    // Asked at 0, 25 and 50 s; at 75 s the budget of 60 is spent.
    expect(await reconcile()).toMatchObject({ checked: 3, deferred: 2, credited: 0 });
    expect(askedFor().slice(before)).toEqual(ids.slice(0, 3));
    const stamps = await queryRows<{ id: string; reconciled_at: Date | null }>(db(), sql`select id, reconciled_at from payments where id in ${ids} order by created_at`);
    expect(stamps.map((r) => r.reconciled_at && new Date(r.reconciled_at).getTime())).toEqual([passAt, passAt, passAt, null, null]);

    // The next pass takes the two it did not ask before asking the first three again.
    clock.advance(5 * MINUTE);
    expect(await reconcile()).toMatchObject({ checked: 3, deferred: 2, credited: 1 });
    expect(askedFor().slice(before + 3)).toEqual([ids[3], ids[4], ids[0]]);
    expect(await paymentRow(db(), ids[4] as string)).toMatchObject({ status: "completed" });
  });

  it("skips a provider for the rest of the pass after its first timeout, asking the other providers' payments instead", async () => {
    const { clock, t, reconcile } = setup();
    const me = await signIn(t, env.issuer);
    const p = providers.current;
    // A full pass of crypto payments comes first in the queue.
    const older = await backlog("crypto", me.id, 200, new Date(clock.now() - HOUR));
    const intents: string[] = [];
    for (let i = 0; i < 6; i++) {
      intents.push((await post(t, me, "/api/payments/crypto/create", { amount: 10 + i, currency: "USDT" })).paymentId as string);
      clock.advance(1_000);
    }
    const cardB = (await post(t, me, "/api/v1/payments/card-b/card-collection", { amount: 12, phoneNumber: "+15550100", email: "p@example.test" })).transactionId as string;
    p.cardB.pay(cardB);
    p.crypto.setStatus(intents[5] as string, "finished");
    clock.advance(16 * MINUTE);
    const cryptoAsks = () => p.crypto.requests.filter((r) => r.method === "GET").length;
    const before = cryptoAsks();
    p.crypto.mode = "timeout";
    try {
      expect(await reconcile()).toMatchObject({ checked: 2, errors: 1, credited: 1, deferred: 199 });
    } finally {
      p.crypto.mode = "ok";
    }
    expect(cryptoAsks() - before).toBe(1);
    expect(await paymentRow(db(), cardB)).toMatchObject({ status: "completed" });
    expect(t.logs).toContainEqual(expect.objectContaining({ level: "warn", msg: "payment reconciliation skips a provider that timed out, for the rest of the pass", provider: "crypto" }));
    const unasked = await queryRows<{ n: number }>(db(), sql`select count(*)::int as n from payments where id in ${[...older, ...intents]} and reconciled_at is null`);
    expect(unasked).toEqual([{ n: 205 }]);

    // With the provider back (and the backlog gone), the next pass asks them and credits.
    await queryRows(db(), sql`update payments set status = 'expired', created_at = created_at - interval '30 days' where id in ${older} returning id`);
    clock.advance(5 * MINUTE);
    expect(await reconcile()).toMatchObject({ checked: 6, credited: 1, deferred: 0 });
    expect(p.crypto.requests.filter((r) => r.method === "GET").slice(before + 1).map((r) => r.path)).toEqual(
      intents.map((id) => `/v1/payment/${p.crypto.byOrder(id).payment_id}`),
    );
    expect(await creditsOf(db(), intents[5] as string)).toBe(1);
  });
});
