import { sql } from "drizzle-orm";
import { afterEach, describe, expect, it, vi } from "vitest";
import { queryRows } from "../../src/db/rows";
import { fixedClock, type Clock } from "../../src/platform/clock";
import { buildTestApp, type TestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { expectError } from "../support/errors";
import { ENTERPRISE, signIn, type Person } from "../support/people";
import { REVIEW_MESSAGES } from "../../src/services/payments/store";
import { balanceOf, creditsOf, deliver, errorsNamed, expectLedgerBalanced, paymentRow, useProviders } from "../support/payments";
import { CARD_B } from "../support/providers/card-b";
import { hmacHex } from "../support/providers/fake-server";
import { sortKeys } from "../support/providers/sort-keys";
import { json } from "../support/users";

// Provider events in every order and number: replays, duplicates at once, failures after success.

const env = useTestEnvironment();
const providers = useProviders();
const db = () => env.db.database.db;
afterEach(async () => {
  for (const fake of [providers.current.cardA, providers.current.cardB, providers.current.crypto, providers.current.mobile]) fake.mode = "ok";
  await expectLedgerBalanced(db());
});

function app(clock?: Clock): TestApp {
  return buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE, env: providers.current.env, ...(clock ? { clock } : {}) });
}
const person = (t: TestApp): Promise<Person> => signIn(t, env.issuer);
const post = (t: TestApp, who: Person, path: string, body: unknown) => t.request(path, json(body, who.headers));
const resultOf = async (res: Response) => {
  expect(res.status, await res.clone().text()).toBe(200);
  return ((await res.json()) as { result: string }).result;
};
const paymentStatusOf = async (t: TestApp, who: Person, id: string) => ((await (await t.request(`/api/payments/${id}/status`, { headers: who.headers })).json()) as { paymentStatus: string }).paymentStatus;

/** The result of delivering card-a's signed order event for a funding request. */
const cardAOrder = async (t: TestApp, fundingRequestId: string, order?: Parameters<typeof providers.current.cardA.orderWebhook>[1]) =>
  resultOf(await deliver(t, providers.current.cardA.orderWebhook(fundingRequestId, order)));

async function cardACheckout(t: TestApp, who: Person, amount = 900): Promise<string> {
  return ((await (await post(t, who, "/api/payments/card-a/checkout", { amount })).json()) as { fundingRequestId: string }).fundingRequestId;
}
async function cardBCheckout(t: TestApp, who: Person, amount = 12): Promise<string> {
  return ((await (await post(t, who, "/api/v1/payments/card-b/card-collection", { amount, phoneNumber: "+15550100", email: "p@example.test" })).json()) as { transactionId: string }).transactionId;
}
async function cryptoIntent(t: TestApp, who: Person, amount = 20): Promise<{ paymentId: string; expiresAt: number }> {
  return (await (await post(t, who, "/api/payments/crypto/create", { amount, currency: "USDT" })).json()) as { paymentId: string; expiresAt: number };
}
async function stkPush(t: TestApp, who: Person, amount = 300): Promise<{ requestId: string; checkoutRequestId: string }> {
  return (await (await post(t, who, "/api/v1/mobile-money/stk-push", { phoneNumber: "0712345678", amount })).json()) as { requestId: string; checkoutRequestId: string };
}

describe("card-a order webhook", () => {
  it("refuses a wrong, missing or other-body signature with 401 and changes nothing", async () => {
    const t = app();
    const me = await person(t);
    const id = await cardACheckout(t, me);
    const hook = providers.current.cardA.orderWebhook(id);
    const wrong: Record<string, string>[] = [{}, { "x-signature": "0".repeat(64) }, { "x-signature": hmacHex("sha256", "another-secret", hook.body) }, { "x-signature": hmacHex("sha256", "card-a-signing-secret", `${hook.body} `) }];
    for (const headers of wrong) {
      await expectError(await deliver(t, hook, headers), 401, "unauthorized");
    }
    expect(await creditsOf(db(), id)).toBe(0);
    expect(await paymentRow(db(), id)).toMatchObject({ status: "pending" });
  });

  it("credits once when the same signed webhook is replayed", async () => {
    const t = app();
    const me = await person(t);
    const id = await cardACheckout(t, me, 900);
    const hook = providers.current.cardA.orderWebhook(id);
    expect(await resultOf(await deliver(t, hook))).toBe("credited");
    expect(await resultOf(await deliver(t, hook))).toBe("duplicate");
    expect(await resultOf(await deliver(t, hook))).toBe("duplicate");
    expect(await creditsOf(db(), id)).toBe(1);
    expect(await balanceOf(db(), me.id)).toBe(900);
  });

  it("credits once when five copies arrive at the same moment", async () => {
    const t = app();
    const me = await person(t);
    const id = await cardACheckout(t, me, 777);
    const hook = providers.current.cardA.orderWebhook(id);
    const results = await Promise.all(Array.from({ length: 5 }, () => deliver(t, hook).then(resultOf)));
    expect(results.sort()).toEqual(["credited", "duplicate", "duplicate", "duplicate", "duplicate"]);
    expect(await creditsOf(db(), id)).toBe(1);
    expect(await balanceOf(db(), me.id)).toBe(777);
  });

  it("keeps a completed request completed when a failed order arrives after it", async () => {
    const t = app();
    const me = await person(t);
    const id = await cardACheckout(t, me, 800);
    expect(await cardAOrder(t, id)).toBe("credited");
    expect(await cardAOrder(t, id, { status: "failed" })).toBe("unchanged");
    expect(await paymentStatusOf(t, me, id)).toBe("completed");
    expect(await balanceOf(db(), me.id)).toBe(800);
  });

  it("logs a second paid order for a completed funding request for a person to refund, and does not credit it", async () => {
    const t = app();
    const me = await person(t);
    const id = await cardACheckout(t, me, 1500);
    // The payer paid the same checkout link twice (two tabs): two orders.
    expect(await cardAOrder(t, id, { orderId: 111 })).toBe("credited");
    expect(t.logs.filter((l) => l.level === "error")).toEqual([]);
    expect(await cardAOrder(t, id, { orderId: 222 })).toBe("unchanged");
    expect(t.logs).toContainEqual(
      expect.objectContaining({ level: "error", msg: "payment received for a completed funding request: refund by hand", paymentId: id, provider: "card-a", userId: me.id, review: "second_payment" }),
    );
    expect(await paymentRow(db(), id)).toMatchObject({ status: "completed", review_reason: "second_payment: charge 222 after the credited one" });
    expect(await creditsOf(db(), id)).toBe(1);
    expect(await balanceOf(db(), me.id)).toBe(1500);
    // A replay of the second order is a duplicate, not another alert.
    const alerts = () => t.logs.filter((l) => l.msg === "payment received for a completed funding request: refund by hand").length;
    expect(await cardAOrder(t, id, { orderId: 222 })).toBe("duplicate");
    expect(alerts()).toBe(1);
  });

  it("does not credit an order whose amount differs from the funding request", async () => {
    const t = app();
    const me = await person(t);
    const id = await cardACheckout(t, me, 800);
    expect(await cardAOrder(t, id, { subtotal: 80_000 })).toBe("unchanged");
    expect(await creditsOf(db(), id)).toBe(0);
  });
});

describe("card-a events other than a paid order", () => {
  it("marks the request failed on a failed order, and a paid order after that still credits once", async () => {
    const t = app();
    const me = await person(t);
    const id = await cardACheckout(t, me, 650);
    expect(await cardAOrder(t, id, { status: "failed", orderId: 7001 })).toBe("failed");
    expect(await paymentStatusOf(t, me, id)).toBe("failed");
    expect(await balanceOf(db(), me.id)).toBe(0);
    // The payer tried again on the same checkout and paid: money that arrived is credited.
    expect(await cardAOrder(t, id, { orderId: 7002 })).toBe("credited");
    expect(await creditsOf(db(), id)).toBe(1);
    expect(await balanceOf(db(), me.id)).toBe(650);
  });

  it("acknowledges another event without moving anything", async () => {
    const t = app();
    const me = await person(t);
    const id = await cardACheckout(t, me, 900);
    expect(await cardAOrder(t, id)).toBe("credited");
    expect(await cardAOrder(t, id, { event: "subscription_created", status: "active" })).toBe("ignored");
    expect(await balanceOf(db(), me.id)).toBe(900);
    expect(await paymentRow(db(), id)).toMatchObject({ status: "completed", review_reason: null });
    expect(t.logs).toContainEqual(expect.objectContaining({ level: "info", msg: "card-a webhook ignored", event: "subscription_created", fundingId: id }));
  });

  it("answers 400 to a correctly signed body that is not JSON", async () => {
    const t = app();
    const body = "order_created but not JSON";
    const res = await deliver(t, { path: "/api/payments/card-a/webhook", body, headers: { "x-signature": hmacHex("sha256", "card-a-signing-secret", body) } });
    await expectError(res, 400, "invalid_input");
  });
});

describe("money a person must handle: logged at error once, and recorded on the payment", () => {
  const REFUND = REVIEW_MESSAGES.reversed;
  const SECOND = REVIEW_MESSAGES.second_payment;
  const NOT_CREDITED = REVIEW_MESSAGES.not_credited;
  const eventOutcome = async (provider: string, eventId: string) =>
    (await queryRows<{ outcome: string }>(db(), sql`select outcome from payment_events where provider = ${provider} and event_id = ${eventId}`))[0]?.outcome;

  it("card-a: a refund of the credited order is recorded for a person, the coins stay, and a refund of the uncredited second order is not", async () => {
    const t = app();
    const me = await person(t);
    const id = await cardACheckout(t, me, 900);
    expect(await cardAOrder(t, id, { orderId: 311 })).toBe("credited");
    expect(await cardAOrder(t, id, { orderId: 312 })).toBe("unchanged"); // paid twice
    // The person refunds the second order: nothing more to do.
    expect(await cardAOrder(t, id, { event: "order_refunded", status: "refunded", orderId: 312 })).toBe("unchanged");
    expect(errorsNamed(t, REFUND)).toEqual([]);
    // Then the credited one is refunded (or charged back) too.
    const refund = providers.current.cardA.orderWebhook(id, { event: "order_refunded", status: "refunded", orderId: 311 });
    expect(await resultOf(await deliver(t, refund))).toBe("unchanged");
    expect(await resultOf(await deliver(t, refund))).toBe("duplicate");
    expect(errorsNamed(t, REFUND)).toEqual([expect.objectContaining({ paymentId: id, provider: "card-a", userId: me.id, review: "reversed", note: "order 311 refunded" })]);
    expect(await paymentRow(db(), id)).toMatchObject({
      status: "completed",
      review_reason: "second_payment: charge 312 after the credited one; reversed: order 311 refunded",
    });
    expect(await eventOutcome("card-a", "order_refunded:311")).toBe("needs_review");
    expect(await eventOutcome("card-a", "order_refunded:312")).toBe("unchanged");
    expect(await balanceOf(db(), me.id)).toBe(900);
  });

  it("card-a: an order refunded before its paid order arrived still credits, and is recorded for a person", async () => {
    const t = app();
    const me = await person(t);
    const id = await cardACheckout(t, me, 700);
    expect(await cardAOrder(t, id, { event: "order_refunded", status: "refunded", orderId: 411 })).toBe("failed");
    expect(await paymentRow(db(), id)).toMatchObject({ status: "failed", failure_reason: "reversed: order 411 refunded", review_reason: null });
    // The order_created delivery that failed earlier comes through.
    expect(await cardAOrder(t, id, { orderId: 411 })).toBe("credited");
    expect(await paymentRow(db(), id)).toMatchObject({ status: "completed", review_reason: "reversed: paid after order 411 refunded" });
    expect(errorsNamed(t, REFUND)).toHaveLength(1);
    expect(await balanceOf(db(), me.id)).toBe(700);
  });

  it("card-a: a paid order that does not match its request is recorded as money not credited", async () => {
    const t = app();
    const me = await person(t);
    const id = await cardACheckout(t, me, 1000);
    expect(await cardAOrder(t, id, { orderId: 511, discountTotal: 500 })).toBe("unchanged");
    expect(errorsNamed(t, NOT_CREDITED)).toEqual([expect.objectContaining({ paymentId: id, review: "not_credited", note: "order 511 of 1000 USD with discount 500" })]);
    expect(await paymentRow(db(), id)).toMatchObject({ status: "pending", review_reason: "not_credited: order 511 of 1000 USD with discount 500" });
    expect(await creditsOf(db(), id)).toBe(0);
  });

  it("card-b: a second successful charge on a completed payment is recorded for a refund", async () => {
    const t = app();
    const me = await person(t);
    const id = await cardBCheckout(t, me, 12);
    const cardB = providers.current.cardB;
    const first = cardB.pay(id);
    expect(await resultOf(await deliver(t, cardB.webhook(first)))).toBe("credited");
    const second = cardB.pay(id);
    expect(await resultOf(await deliver(t, cardB.webhook(second)))).toBe("unchanged");
    expect(errorsNamed(t, SECOND)).toEqual([expect.objectContaining({ paymentId: id, provider: "card-b", review: "second_payment", note: `charge ${second.id} after the credited one` })]);
    expect(await paymentRow(db(), id)).toMatchObject({ status: "completed", review_reason: `second_payment: charge ${second.id} after the credited one` });
    expect(await eventOutcome("card-b", `charge.completed:${second.id}`)).toBe("needs_review");
    expect(await balanceOf(db(), me.id)).toBe(1200);
  });

  it("card-b: a refund or chargeback of a credited payment is recorded for a person, and the coins stay", async () => {
    const t = app();
    const me = await person(t);
    const id = await cardBCheckout(t, me, 14);
    const cardB = providers.current.cardB;
    const tx = cardB.pay(id);
    expect(await resultOf(await deliver(t, cardB.webhook(tx)))).toBe("credited");
    const event = (name: string, data: Record<string, unknown> = tx as unknown as Record<string, unknown>) => ({ ...cardB.webhook(tx), body: JSON.stringify({ event: name, data }) });
    expect(await resultOf(await deliver(t, event("refund.completed")))).toBe("unchanged");
    expect(await resultOf(await deliver(t, event("chargeback.created")))).toBe("unchanged");
    expect(await resultOf(await deliver(t, event("chargeback.created")))).toBe("duplicate");
    expect(await resultOf(await deliver(t, event("refund.completed", { ...tx, id: tx.id + 1_000_000, tx_ref: "cbtx_not_one_of_ours" })))).toBe("unknown_payment");
    expect(errorsNamed(t, REFUND).map((l) => l.note)).toEqual([`refund.completed for transaction ${tx.id}`, `chargeback.created for transaction ${tx.id}`]);
    expect(await paymentRow(db(), id)).toMatchObject({
      status: "completed",
      review_reason: `reversed: refund.completed for transaction ${tx.id}; reversed: chargeback.created for transaction ${tx.id}`,
    });
    expect(await balanceOf(db(), me.id)).toBe(1400);
  });

  it("crypto: a refund after the credit, and coins the provider books under another payment id, are recorded for a person", async () => {
    const t = app();
    const me = await person(t);
    const { paymentId } = await cryptoIntent(t, me, 20);
    const crypto = providers.current.crypto;
    crypto.setStatus(paymentId, "finished");
    expect(await resultOf(await deliver(t, crypto.ipn(paymentId)))).toBe("credited");
    // The payer sent coins to the address again: the provider books them under a payment of its own.
    const repeated = crypto.ipn(paymentId, { payment_id: "999000111", payment_status: "finished" });
    expect(await resultOf(await deliver(t, repeated))).toBe("unchanged");
    expect(errorsNamed(t, SECOND)).toEqual([expect.objectContaining({ paymentId, provider: "crypto", note: "crypto payment 999000111 finished under the same order" })]);
    crypto.setStatus(paymentId, "refunded");
    expect(await resultOf(await deliver(t, crypto.ipn(paymentId)))).toBe("unchanged");
    expect(errorsNamed(t, REFUND)).toEqual([expect.objectContaining({ paymentId, provider: "crypto", note: "crypto payment refunded" })]);
    expect(await paymentRow(db(), paymentId)).toMatchObject({
      status: "completed",
      review_reason: "second_payment: crypto payment 999000111 finished under the same order; reversed: crypto payment refunded",
    });
    expect(await balanceOf(db(), me.id)).toBe(2000);
    // A refund before any credit just fails the payment: nobody holds money for it.
    const other = await cryptoIntent(t, me, 30);
    crypto.setStatus(other.paymentId, "refunded");
    expect(await resultOf(await deliver(t, crypto.ipn(other.paymentId)))).toBe("failed");
    expect(await paymentRow(db(), other.paymentId)).toMatchObject({ status: "failed", review_reason: null });
    expect(errorsNamed(t, REFUND)).toHaveLength(1);
  });
});

describe("signed notifications naming another provider's payment", () => {
  /** Every event recorded against a payment, and the payment's state: neither may move. */
  const trace = async (id: string) => ({
    events: await queryRows(db(), sql`select provider, kind from payment_events where payment_id = ${id} order by received_at`),
    row: (await queryRows(db(), sql`select status, failure_reason, updated_at from payments where id = ${id}`))[0],
  });
  const eventsNamed = (provider: string, eventPrefix: string) =>
    queryRows(db(), sql`select event_id from payment_events where provider = ${provider} and event_id like ${`${eventPrefix}%`}`);

  it("card-a: an order whose custom data names a crypto or card-b payment, or nothing of ours, is unknown_payment and moves nothing", async () => {
    const t = app();
    const me = await person(t);
    const { paymentId } = await cryptoIntent(t, me, 20);
    const cardB = await cardBCheckout(t, me, 12);
    providers.current.crypto.setStatus(paymentId, "confirming");
    const before = { crypto: await trace(paymentId), cardB: await trace(cardB) };
    for (const [id, orderId] of [[paymentId, 90_001], [cardB, 90_002], ["fund_not_one_of_ours", 90_003]] as const) {
      for (const status of ["paid", "failed"]) expect(await cardAOrder(t, id, { orderId, status, subtotal: 2000 })).toBe("unknown_payment");
    }
    expect({ crypto: await trace(paymentId), cardB: await trace(cardB) }).toEqual(before);
    expect(await eventsNamed("card-a", "order_created:9000")).toEqual([]);
    expect(t.logs).toContainEqual(expect.objectContaining({ level: "warn", msg: "card-a webhook for an unknown funding request", fundingId: paymentId }));
    // The crypto intent still settles from its own provider.
    providers.current.crypto.setStatus(paymentId, "finished");
    expect(await resultOf(await deliver(t, providers.current.crypto.ipn(paymentId)))).toBe("credited");
    expect(await balanceOf(db(), me.id)).toBe(2000);
  });

  it("crypto: a notification whose order_id names a card-a or card-b payment, or nothing of ours, is unknown_payment and moves nothing", async () => {
    const t = app();
    const me = await person(t);
    const fund = await cardACheckout(t, me, 900);
    const cardB = await cardBCheckout(t, me, 12);
    const { paymentId } = await cryptoIntent(t, me, 20);
    const crypto = providers.current.crypto;
    const p = crypto.byOrder(paymentId);
    const before = { fund: await trace(fund), cardB: await trace(cardB) };
    for (const orderId of [fund, cardB, "cpay_not_one_of_ours"]) {
      for (const payment_status of ["finished", "failed", "expired"]) {
        const value = { ...p, order_id: orderId, payment_status };
        const body = JSON.stringify(value);
        const res = await deliver(t, { path: "/api/payments/crypto/ipn", body, headers: { "x-nowpayments-sig": hmacHex("sha512", "crypto-ipn-secret", JSON.stringify(sortKeys(value))) } });
        expect(await resultOf(res)).toBe("unknown_payment");
      }
    }
    expect({ fund: await trace(fund), cardB: await trace(cardB) }).toEqual(before);
    expect(await eventsNamed("crypto", `${p.payment_id}:`)).toEqual([]);
    // The intent's own notification is not used up by them.
    crypto.setStatus(paymentId, "finished");
    expect(await resultOf(await deliver(t, crypto.ipn(paymentId)))).toBe("credited");
    expect(await balanceOf(db(), me.id)).toBe(2000);
  });
});

describe("card-b webhook", () => {
  it("accepts the Verification-Hash (or the provider's verif-hash) only when it equals the secret", async () => {
    const t = app();
    const me = await person(t);
    const id = await cardBCheckout(t, me);
    const hook = providers.current.cardB.webhook(providers.current.cardB.pay(id));
    const wrong: Record<string, string>[] = [{}, { "verification-hash": "wrong" }, { "verif-hash": `${CARD_B.webhookSecret}x` }, { "verification-hash": "" }];
    for (const headers of wrong) {
      await expectError(await deliver(t, hook, headers), 401, "unauthorized");
    }
    expect(await creditsOf(db(), id)).toBe(0);
    expect(await resultOf(await deliver(t, hook, { "Verification-Hash": CARD_B.webhookSecret }))).toBe("credited");
    expect(await resultOf(await deliver(t, hook))).toBe("duplicate");
    expect(await balanceOf(db(), me.id)).toBe(1200);
  });

  it("credits once for five concurrent copies of the webhook", async () => {
    const t = app();
    const me = await person(t);
    const id = await cardBCheckout(t, me, 15);
    const hook = providers.current.cardB.webhook(providers.current.cardB.pay(id));
    const results = await Promise.all(Array.from({ length: 5 }, () => deliver(t, hook).then(resultOf)));
    expect(results.filter((r) => r === "credited")).toHaveLength(1);
    expect(results.filter((r) => r === "duplicate")).toHaveLength(4);
    expect(await creditsOf(db(), id)).toBe(1);
    expect(await balanceOf(db(), me.id)).toBe(1500);
  });

  it("does not credit when the verify API disagrees with what we stored, whatever the webhook claims", async () => {
    const t = app();
    const me = await person(t);
    const id = await cardBCheckout(t, me, 12);
    // The provider charged 1.20, the webhook body claims 12.
    const tx = providers.current.cardB.pay(id, { amount: 1.2 });
    const claimed = providers.current.cardB.webhook(tx, { amount: 12 });
    expect(await resultOf(await deliver(t, claimed))).toBe("unchanged");
    // A disagreement does not use the event up: the retry is verified again, and again refused.
    const verifies = providers.current.cardB.verifyCalls();
    expect(await resultOf(await deliver(t, claimed))).toBe("unchanged");
    expect(providers.current.cardB.verifyCalls()).toBe(verifies + 1);
    const other = providers.current.cardB.pay(id, { currency: "EUR" });
    expect(await resultOf(await deliver(t, providers.current.cardB.webhook(other, { currency: "USD" })))).toBe("unchanged");
    expect(await creditsOf(db(), id)).toBe(0);
    expect(await paymentRow(db(), id)).toMatchObject({ status: "pending" });
  });

  it("ignores a failure that arrives after the success", async () => {
    const t = app();
    const me = await person(t);
    const id = await cardBCheckout(t, me, 10);
    const paid = providers.current.cardB.pay(id);
    const failed = providers.current.cardB.pay(id, { status: "failed" });
    expect(await resultOf(await deliver(t, providers.current.cardB.webhook(paid)))).toBe("credited");
    expect(await resultOf(await deliver(t, providers.current.cardB.webhook(failed)))).toBe("unchanged");
    expect(await paymentStatusOf(t, me, id)).toBe("completed");
    expect(await balanceOf(db(), me.id)).toBe(1000);
  });

  it("credits a retry that succeeds after a failed attempt", async () => {
    const t = app();
    const me = await person(t);
    const id = await cardBCheckout(t, me, 10);
    expect(await resultOf(await deliver(t, providers.current.cardB.webhook(providers.current.cardB.pay(id, { status: "failed" }))))).toBe("failed");
    expect(await resultOf(await deliver(t, providers.current.cardB.webhook(providers.current.cardB.pay(id))))).toBe("credited");
    expect(await creditsOf(db(), id)).toBe(1);
  });

  it("answers 502 when the verify API times out, records nothing, and credits on the provider's retry", async () => {
    const t = app();
    const me = await person(t);
    const id = await cardBCheckout(t, me, 11);
    const hook = providers.current.cardB.webhook(providers.current.cardB.pay(id));
    providers.current.cardB.mode = "timeout";
    await expectError(await deliver(t, hook), 502, "provider_error");
    expect(await paymentRow(db(), id)).toMatchObject({ status: "pending" });
    providers.current.cardB.mode = "ok";
    expect(await resultOf(await deliver(t, hook))).toBe("credited");
    expect(await balanceOf(db(), me.id)).toBe(1100);
  });

  it("acknowledges a signed webhook for a transaction that is not ours, or another event, without crediting", async () => {
    const t = app();
    const stranger = providers.current.cardB.pay("cbtx_not_one_of_ours", { amount: 50 });
    expect(await resultOf(await deliver(t, providers.current.cardB.webhook(stranger)))).toBe("unknown_payment");
    const me = await person(t);
    const id = await cardBCheckout(t, me, 10);
    const paid = providers.current.cardB.pay(id);
    const other = { ...providers.current.cardB.webhook(paid), body: JSON.stringify({ event: "transfer.completed", data: paid }) };
    expect(await resultOf(await deliver(t, other))).toBe("ignored");
    expect(await creditsOf(db(), id)).toBe(0);
    expect(await paymentRow(db(), id)).toMatchObject({ status: "pending" });
  });

  it("shows the state on the browser redirect and never marks the payment successful", async () => {
    const t = app();
    const me = await person(t);
    const id = await cardBCheckout(t, me, 10);
    const tx = providers.current.cardB.pay(id);
    const res = await t.request(`/api/v1/payments/card-b/redirect?status=successful&tx_ref=${id}&transaction_id=${tx.id}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ transactionId: id, paymentStatus: "pending" });
    expect(await creditsOf(db(), id)).toBe(0);
    expect(await paymentRow(db(), id)).toMatchObject({ status: "pending" });
    await expectError(await t.request("/api/v1/payments/card-b/redirect?status=successful&tx_ref=cbtx_nothing"), 404, "not_found");
  });
});

describe("crypto payment notifications", () => {
  it("checks the HMAC-SHA512 over the key-sorted body: right, wrong, missing and replayed", async () => {
    const t = app();
    const me = await person(t);
    const { paymentId } = await cryptoIntent(t, me, 20);
    providers.current.crypto.setStatus(paymentId, "finished");
    const ipn = providers.current.crypto.ipn(paymentId);
    await expectError(await deliver(t, ipn, {}), 401, "unauthorized");
    await expectError(await deliver(t, ipn, { "x-nowpayments-sig": hmacHex("sha512", "crypto-ipn-secret", ipn.body) }), 401, "unauthorized");
    await expectError(await deliver(t, ipn, { "x-nowpayments-sig": "f".repeat(128) }), 401, "unauthorized");
    expect(await resultOf(await deliver(t, ipn))).toBe("credited");
    expect(await resultOf(await deliver(t, ipn))).toBe("duplicate");
    expect(await balanceOf(db(), me.id)).toBe(2000);
  });

  it("moves through waiting and confirming without credit, credits on finished, ignores a later failure", async () => {
    const t = app();
    const me = await person(t);
    const { paymentId } = await cryptoIntent(t, me, 30);
    const crypto = providers.current.crypto;
    for (const s of ["waiting", "confirming", "partially_paid"]) {
      crypto.setStatus(paymentId, s);
      expect(await resultOf(await deliver(t, crypto.ipn(paymentId)))).toBe("unchanged");
    }
    expect(await creditsOf(db(), paymentId)).toBe(0);
    crypto.setStatus(paymentId, "finished");
    const finished = crypto.ipn(paymentId);
    const results = await Promise.all(Array.from({ length: 5 }, () => deliver(t, finished).then(resultOf)));
    expect(results.filter((r) => r === "credited")).toHaveLength(1);
    crypto.setStatus(paymentId, "failed");
    expect(await resultOf(await deliver(t, crypto.ipn(paymentId)))).toBe("unchanged");
    expect(await paymentStatusOf(t, me, paymentId)).toBe("completed");
    expect(await balanceOf(db(), me.id)).toBe(3000);
  });

  /** An intent on a clock frozen at a whole second near now (the test's access tokens stay valid on it). */
  async function intentOnFrozenClock(amount: number) {
    const start = Math.floor(Date.now() / 1000) * 1000;
    const clock = fixedClock(start);
    const t = app(clock);
    const me = await person(t);
    const intent = await cryptoIntent(t, me, amount);
    expect(intent.expiresAt).toBe(start / 1000 + 3_600);
    return { clock, t, me, ...intent };
  }

  it("credits money that finished at our price, even when the notification arrives after expiresAt", async () => {
    const { clock, t, me, paymentId, expiresAt } = await intentOnFrozenClock(20);
    clock.set(expiresAt * 1000 + 2 * 60_000);
    providers.current.crypto.setStatus(paymentId, "finished");
    expect(await resultOf(await deliver(t, providers.current.crypto.ipn(paymentId)))).toBe("credited");
    expect(await paymentRow(db(), paymentId)).toMatchObject({ status: "completed" });
    expect(await balanceOf(db(), me.id)).toBe(2000);
  });

  it("never expires an intent on a waiting notification past expiresAt (reconciliation asks first); money that then finishes is credited", async () => {
    const { clock, t, me, paymentId, expiresAt } = await intentOnFrozenClock(20);
    const early = await cryptoIntent(t, me, 30);
    const crypto = providers.current.crypto;
    clock.set(expiresAt * 1000 - 1_000);
    expect(await resultOf(await deliver(t, crypto.ipn(early.paymentId)))).toBe("unchanged");
    expect(await paymentRow(db(), early.paymentId)).toMatchObject({ status: "pending" });
    // The notification may be a redelivery of a state long past: it changes nothing.
    clock.set(expiresAt * 1000 + 1_000);
    expect(await resultOf(await deliver(t, crypto.ipn(paymentId)))).toBe("unchanged");
    expect(await paymentRow(db(), paymentId)).toMatchObject({ status: "pending" });
    // The provider's own `expired` does end it.
    expect(await resultOf(await deliver(t, crypto.ipn(paymentId, { payment_status: "expired" })))).toBe("expired");
    expect(await paymentRow(db(), paymentId)).toMatchObject({ status: "expired", failure_reason: "provider expired the payment" });
    // The payer sent the quoted amount anyway and the provider finished it at our price.
    crypto.setStatus(paymentId, "finished");
    expect(await resultOf(await deliver(t, crypto.ipn(paymentId)))).toBe("credited");
    expect(await paymentRow(db(), paymentId)).toMatchObject({ status: "completed" });
    expect(await creditsOf(db(), paymentId)).toBe(1);
    // Finished at another price is not what the intent quoted: nothing is credited.
    crypto.setStatus(early.paymentId, "finished");
    expect(await resultOf(await deliver(t, crypto.ipn(early.paymentId, { price_amount: 3 })))).toBe("unchanged");
    expect(await creditsOf(db(), early.paymentId)).toBe(0);
    expect(await balanceOf(db(), me.id)).toBe(2000);
  });

  it("keeps an intent pending past expiresAt while the network confirms money sent to it", async () => {
    const { clock, t, me, paymentId, expiresAt } = await intentOnFrozenClock(25);
    const crypto = providers.current.crypto;
    clock.set(expiresAt * 1000 + 60_000);
    crypto.setStatus(paymentId, "confirming");
    expect(await resultOf(await deliver(t, crypto.ipn(paymentId)))).toBe("unchanged");
    expect(await paymentRow(db(), paymentId)).toMatchObject({ status: "pending" });
    crypto.setStatus(paymentId, "finished");
    expect(await resultOf(await deliver(t, crypto.ipn(paymentId)))).toBe("credited");
    expect(await balanceOf(db(), me.id)).toBe(2500);
  });
});

describe("what an unauthenticated notification can cost", () => {
  it("crypto: refuses a missing or malformed x-nowpayments-sig with 401 before the body is parsed", async () => {
    const t = app();
    const me = await person(t);
    const { paymentId } = await cryptoIntent(t, me, 20);
    const crypto = providers.current.crypto;
    crypto.setStatus(paymentId, "finished");
    const ipn = crypto.ipn(paymentId);
    const good = ipn.headers["x-nowpayments-sig"] as string;
    const parse = vi.spyOn(JSON, "parse");
    const parsedBody = () => parse.mock.calls.filter(([text]) => text === ipn.body).length;
    try {
      const refused: Record<string, string>[] = [{}, { "x-nowpayments-sig": "" }, { "x-nowpayments-sig": good.slice(0, 127) }, { "x-nowpayments-sig": `${good}0` }, { "x-nowpayments-sig": `${good.slice(0, 127)}g` }];
      for (const headers of refused) {
        await expectError(await deliver(t, ipn, headers), 401, "unauthorized");
      }
      expect(parsedBody()).toBe(0);
      // A well-formed signature is checked against the body, so that one is parsed (and refused).
      await expectError(await deliver(t, ipn, { "x-nowpayments-sig": "f".repeat(128) }), 401, "unauthorized");
      expect(parsedBody()).toBe(1);
    } finally {
      parse.mockRestore();
    }
    // Upper-case hex is the same signature.
    expect(await resultOf(await deliver(t, ipn, { "x-nowpayments-sig": good.toUpperCase() }))).toBe("credited");
  });

  it("refuses a body over 64 KiB on every provider callback with 413, before any signature, hash or token", async () => {
    const t = app();
    const me = await person(t);
    const { paymentId } = await cryptoIntent(t, me, 20);
    const crypto = providers.current.crypto;
    crypto.setStatus(paymentId, "finished");
    const ipn = crypto.ipn(paymentId);
    const padded = (body: string, size: number) => `${body.slice(0, -1)},"padding":"${"x".repeat(size - body.length - 13)}"}`;
    const over = padded(ipn.body, 64 * 1024 + 1);
    expect(over.length).toBe(64 * 1024 + 1);
    const paths = ["/api/payments/card-a/webhook", "/api/v1/payments/card-b/webhook", "/api/payments/crypto/ipn", `/api/v1/mobile-money/callback/${"a".repeat(64)}`];
    for (const path of paths) {
      // Streamed (no Content-Length) and declared: both are held to the route's limit.
      await expectError(await t.request(path, { method: "POST", headers: { "content-type": "application/json", ...ipn.headers }, body: over }), 413, "payload_too_large");
      await expectError(
        await t.request(path, { method: "POST", headers: { "content-type": "application/json", "content-length": String(over.length), ...ipn.headers }, body: over }),
        413,
        "payload_too_large",
      );
    }
    // Other routes keep the general 1 MiB limit: the same body is not too large for them.
    expect((await post(t, me, "/api/v1/wallet/transfer", { padding: "x".repeat(64 * 1024) })).status).toBe(400);
    // A notification at the limit is read and judged by its signature.
    const atLimit = padded(ipn.body, 64 * 1024);
    expect(atLimit.length).toBe(64 * 1024);
    await expectError(await deliver(t, { ...ipn, body: atLimit }), 401, "unauthorized");
    expect(await paymentRow(db(), paymentId)).toMatchObject({ status: "pending" });
    expect(await resultOf(await deliver(t, ipn))).toBe("credited");
  });
});

describe("verified notifications with an unexpected body", () => {
  // Only the provider (or the holder of the push's token) can send these; they still answer 400
  // and change nothing, instead of a 500 the provider would retry for ever.
  const NOT_OBJECTS = ["null", "5", '"order_created"', "[]", "true"];

  it("card-a: a signed body that is not an object, or names an id with a control character, is 400", async () => {
    const t = app();
    const me = await person(t);
    const id = await cardACheckout(t, me, 900);
    const signed = (body: string) => ({ path: "/api/payments/card-a/webhook", body, headers: { "x-signature": hmacHex("sha256", "card-a-signing-secret", body) } });
    for (const body of NOT_OBJECTS) await expectError(await deliver(t, signed(body)), 400, "invalid_input");
    const order = JSON.parse(providers.current.cardA.orderWebhook(id).body) as { meta: { custom_data: Record<string, unknown> }; data: { id: unknown } };
    const withNul = structuredClone(order);
    withNul.meta.custom_data.funding_request_id = `${id}\u0000`;
    const withNulOrder = structuredClone(order);
    withNulOrder.data.id = "1\u0000";
    for (const body of [withNul, withNulOrder]) {
      const error = await expectError(await deliver(t, signed(JSON.stringify(body))), 400, "invalid_input");
      expect(error.details?.[0]?.path).toMatch(/funding_request_id|data\.id/);
    }
    expect(await paymentRow(db(), id)).toMatchObject({ status: "pending" });
    expect(await creditsOf(db(), id)).toBe(0);
    expect(await resultOf(await deliver(t, providers.current.cardA.orderWebhook(id)))).toBe("credited");
  });

  it("card-b: a body with the right hash that is not an object, or names an id with a control character, is 400", async () => {
    const t = app();
    const me = await person(t);
    const id = await cardBCheckout(t, me, 12);
    const tx = providers.current.cardB.pay(id);
    const hashed = (body: string) => ({ path: "/api/v1/payments/card-b/webhook", body, headers: { "verif-hash": CARD_B.webhookSecret } });
    for (const body of NOT_OBJECTS) await expectError(await deliver(t, hashed(body)), 400, "invalid_input");
    const verifies = providers.current.cardB.verifyCalls();
    for (const data of [{ ...tx, tx_ref: `${id}\u0000` }, { ...tx, id: `${tx.id}\u0000` }, { ...tx, tx_ref: "x".repeat(300) }]) {
      await expectError(await deliver(t, hashed(JSON.stringify({ event: "charge.completed", data }))), 400, "invalid_input");
    }
    expect(providers.current.cardB.verifyCalls()).toBe(verifies);
    expect(await paymentRow(db(), id)).toMatchObject({ status: "pending" });
    expect(await resultOf(await deliver(t, providers.current.cardB.webhook(tx)))).toBe("credited");
  });

  it("crypto: a correctly signed body that is not an object, or names an id with a control character, is 400", async () => {
    const t = app();
    const me = await person(t);
    const { paymentId } = await cryptoIntent(t, me, 20);
    const crypto = providers.current.crypto;
    crypto.setStatus(paymentId, "finished");
    const signed = (value: unknown) => {
      const body = JSON.stringify(value);
      return { path: "/api/payments/crypto/ipn", body, headers: { "x-nowpayments-sig": hmacHex("sha512", "crypto-ipn-secret", JSON.stringify(sortKeys(value))) } };
    };
    for (const body of NOT_OBJECTS) await expectError(await deliver(t, signed(JSON.parse(body))), 400, "invalid_input");
    const p = crypto.byOrder(paymentId);
    for (const bad of [{ ...p, order_id: `${paymentId}\u0000` }, { ...p, payment_id: `${p.payment_id}\u0000` }, { ...p, payment_status: "finished\u0000" }]) {
      await expectError(await deliver(t, signed(bad)), 400, "invalid_input");
    }
    // Unsigned, the same bodies are still 401.
    await expectError(await deliver(t, { ...signed(null), headers: { "x-nowpayments-sig": "0".repeat(128) } }), 401, "unauthorized");
    expect(await paymentRow(db(), paymentId)).toMatchObject({ status: "pending" });
    expect(await resultOf(await deliver(t, crypto.ipn(paymentId)))).toBe("credited");
  });

  it("mobile money: a callback to a push's token that is not an object, or names an id with a control character, is 400", async () => {
    const t = app();
    const me = await person(t);
    const push = await stkPush(t, me, 300);
    const mm = providers.current.mobile;
    mm.complete(push.checkoutRequestId, 0);
    const hook = mm.callback(push.checkoutRequestId);
    for (const body of NOT_OBJECTS) await expectError(await deliver(t, { ...hook, body }), 400, "invalid_input");
    const withNul = JSON.parse(hook.body) as { Body: { stkCallback: Record<string, unknown> } };
    withNul.Body.stkCallback.CheckoutRequestID = `${push.checkoutRequestId}\u0000`;
    await expectError(await deliver(t, { ...hook, body: JSON.stringify(withNul) }), 400, "invalid_input");
    expect(await paymentRow(db(), push.requestId)).toMatchObject({ status: "pending" });
    expect(await resultOf(await deliver(t, hook))).toBe("credited");
  });
});

describe("mobile-money callback", () => {
  it("refuses an unknown callback token with 401", async () => {
    const t = app();
    await expectError(await t.request(`/api/v1/mobile-money/callback/${"a".repeat(64)}`, json({ Body: { stkCallback: {} } })), 401, "unauthorized");
    await expectError(await t.request("/api/v1/mobile-money/callback/short", json({})), 401, "unauthorized");
    // The token is the callback's secret: the logger's redactor keeps it out of the access line.
    const lines = t.logs.filter((l) => l.msg === "request" && String(l.route).includes("mobile-money"));
    expect(lines.map((l) => l.path)).toEqual(["/api/v1/mobile-money/callback/[redacted-hex]", "/api/v1/mobile-money/callback/short"]);
    expect(JSON.stringify(t.logs)).not.toContain("a".repeat(64));
    expect(JSON.stringify(t.logs)).not.toContain("a".repeat(64));
  });

  it("takes the outcome from the status query, not from the unsigned callback body", async () => {
    const t = app();
    const me = await person(t);
    const push = await stkPush(t, me, 300);
    const mm = providers.current.mobile;
    // The payer cancelled; a forged callback claims success.
    mm.complete(push.checkoutRequestId, 1032);
    expect(await resultOf(await deliver(t, mm.callback(push.checkoutRequestId, 0)))).toBe("failed");
    expect(await creditsOf(db(), push.requestId)).toBe(0);

    const paid = await stkPush(t, me, 300);
    mm.complete(paid.checkoutRequestId, 0);
    const hook = mm.callback(paid.checkoutRequestId);
    const results = await Promise.all(Array.from({ length: 5 }, () => deliver(t, hook).then(resultOf)));
    expect(results.filter((r) => r === "credited")).toHaveLength(1);
    expect(await resultOf(await deliver(t, hook))).toBe("duplicate");
    expect(await balanceOf(db(), me.id)).toBe(300);
    const queries = mm.requests.filter((r) => r.path === "/mpesa/stkpushquery/v1/query");
    expect(queries.length).toBeGreaterThan(0);
  });

  it("refuses a callback that is not JSON or names another request, changing nothing", async () => {
    const t = app();
    const me = await person(t);
    const push = await stkPush(t, me, 250);
    const other = await stkPush(t, me, 250);
    const mm = providers.current.mobile;
    mm.complete(push.checkoutRequestId, 0);
    const hook = mm.callback(push.checkoutRequestId);
    await expectError(await deliver(t, { ...hook, body: "{not json" }), 400, "invalid_input");
    // Its own token with the other request's CheckoutRequestID.
    await expectError(await deliver(t, { ...hook, body: mm.callback(other.checkoutRequestId).body }), 400, "invalid_input");
    expect(await paymentRow(db(), push.requestId)).toMatchObject({ status: "pending" });
    expect(await creditsOf(db(), push.requestId)).toBe(0);
  });

  it("answers 502 when the status query fails, records nothing, and credits once on the next callback", async () => {
    const t = app();
    const me = await person(t);
    const push = await stkPush(t, me, 400);
    const mm = providers.current.mobile;
    mm.complete(push.checkoutRequestId, 0);
    const hook = mm.callback(push.checkoutRequestId);
    mm.mode = "error";
    await expectError(await deliver(t, hook), 502, "provider_error");
    expect(await paymentRow(db(), push.requestId)).toMatchObject({ status: "pending" });
    mm.mode = "ok";
    expect(await resultOf(await deliver(t, hook))).toBe("credited");
    expect(await resultOf(await deliver(t, hook))).toBe("duplicate");
    expect(await balanceOf(db(), me.id)).toBe(400);
  });

  it("leaves a request pending while the provider is still processing it", async () => {
    const t = app();
    const me = await person(t);
    const push = await stkPush(t, me, 200);
    expect(await resultOf(await deliver(t, providers.current.mobile.callback(push.checkoutRequestId, 0)))).toBe("unchanged");
    expect(await paymentRow(db(), push.requestId)).toMatchObject({ status: "pending" });
  });
});
