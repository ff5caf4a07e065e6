import { createHash } from "node:crypto";
import { sql } from "drizzle-orm";
import { afterEach, describe, expect, it, onTestFinished } from "vitest";
import { queryRows } from "../../src/db/rows";
import { buildTestApp, type TestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { expectError } from "../support/errors";
import { ENTERPRISE, signIn, type Person } from "../support/people";
import { creditsOf, deliver, expectLedgerBalanced, paymentRow, useProviders } from "../support/payments";
import { json } from "../support/users";
import { testRedis } from "../support/redis";

const env = useTestEnvironment();
const providers = useProviders();
afterEach(async () => {
  for (const fake of [providers.current.cardA, providers.current.cardB, providers.current.crypto, providers.current.mobile]) fake.mode = "ok";
  await expectLedgerBalanced(env.db.database.db);
});

function app(extra: Record<string, string> = {}): TestApp {
  return buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE, env: { ...providers.current.env, ...extra } });
}
const person = (t: TestApp, admin = false): Promise<Person> => signIn(t, env.issuer, { admin });
const post = (t: TestApp, who: Person, path: string, body: unknown) => t.request(path, json(body, who.headers));
const status = (t: TestApp, who: Person, id: string) => t.request(`/api/payments/${id}/status`, { headers: who.headers });

describe("card-a checkout", () => {
  it("creates a pending funding request and a hosted checkout with our price and id", async () => {
    const t = app();
    const me = await person(t);
    const res = await post(t, me, "/api/payments/card-a/checkout", { amount: 500, currency: "usd" });
    expect(res.status).toBe(201);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ status: "pending", amount: 500, currency: "USD", checkoutUrl: expect.stringMatching(/^https:\/\/shop\.card-a\.test\//), fundingRequestId: expect.stringMatching(/^fund_/) });
    const call = providers.current.cardA.requests.at(-1);
    expect(call?.headers["content-type"]).toBe("application/vnd.api+json");
    expect(call?.body).toMatchObject({
      data: {
        type: "checkouts",
        attributes: { custom_price: 500, checkout_data: { custom: { funding_request_id: body.fundingRequestId } }, checkout_options: { discount: false } },
        relationships: { store: { data: { type: "stores", id: "4242" } }, variant: { data: { type: "variants", id: "777" } } },
      },
    });
    expect(await paymentRow(env.db.database.db, body.fundingRequestId as string)).toMatchObject({ status: "pending", coins: 500 });
  });

  it("refuses 50 cents or less, fractions and strings with 400 before calling the provider", async () => {
    const t = app();
    const me = await person(t);
    const before = providers.current.cardA.requests.length;
    for (const amount of [50, 0, -1, 50.5, "500"]) {
      const body = await expectError(await post(t, me, "/api/payments/card-a/checkout", { amount, currency: "USD" }), 400, "invalid_input");
      expect(body.details?.[0]?.path).toBe("amount");
    }
    await expectError(await post(t, me, "/api/payments/card-a/checkout", { amount: 500, currency: "XYZ" }), 400, "invalid_input");
    // A currency we have a rate for, but not the store's: the provider would charge the price in USD.
    const eur = await expectError(await post(t, me, "/api/payments/card-a/checkout", { amount: 500, currency: "EUR" }), 400, "invalid_input");
    expect(eur.details).toEqual([{ path: "currency", message: "must be USD, the store's currency" }]);
    expect(providers.current.cardA.requests.length).toBe(before);
    expect((await post(t, me, "/api/payments/card-a/checkout", { amount: 51, currency: "USD" })).status).toBe(201);
  });

  it("completes on a signed order webhook and credits the coins once", async () => {
    const t = app();
    const me = await person(t);
    const { fundingRequestId } = (await (await post(t, me, "/api/payments/card-a/checkout", { amount: 1234 })).json()) as { fundingRequestId: string };
    const hook = providers.current.cardA.orderWebhook(fundingRequestId);
    const res = await deliver(t, hook);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ received: true, result: "credited" });
    expect(await creditsOf(env.db.database.db, fundingRequestId)).toBe(1);
    const s = (await (await status(t, me, fundingRequestId)).json()) as Record<string, unknown>;
    expect(s).toMatchObject({ status: "success", paymentId: fundingRequestId, paymentStatus: "completed", amount: 1234, currency: "USD", provider: "card-a", timestamp: expect.any(Number) });
    const overview = (await (await t.request("/api/v1/wallet/overview", { headers: me.headers })).json()) as { balance: number };
    expect(overview.balance).toBe(1234);
  });
});

describe("card-a store currency and discounts", () => {
  it("prices checkouts in CARD_A_CURRENCY, the default when none is sent", async () => {
    const t = app({ CARD_A_CURRENCY: "eur" });
    const me = await person(t);
    const res = await post(t, me, "/api/payments/card-a/checkout", { amount: 1000 });
    expect(res.status).toBe(201);
    const { fundingRequestId, currency } = (await res.json()) as { fundingRequestId: string; currency: string };
    expect(currency).toBe("EUR");
    await expectError(await post(t, me, "/api/payments/card-a/checkout", { amount: 1000, currency: "USD" }), 400, "invalid_input");
    expect(await (await deliver(t, providers.current.cardA.orderWebhook(fundingRequestId, { currency: "EUR" }))).json()).toEqual({ received: true, result: "credited" });
  });

  it("does not credit an order that a discount made cheaper than the coins", async () => {
    const t = app();
    const me = await person(t);
    const { fundingRequestId } = (await (await post(t, me, "/api/payments/card-a/checkout", { amount: 1000 })).json()) as { fundingRequestId: string };
    const res = await deliver(t, providers.current.cardA.orderWebhook(fundingRequestId, { discountTotal: 500 }));
    expect(await res.json()).toEqual({ received: true, result: "unchanged" });
    expect(await creditsOf(env.db.database.db, fundingRequestId)).toBe(0);
    expect(t.logs).toContainEqual(expect.objectContaining({ msg: "card-a order does not match its funding request", fundingId: fundingRequestId, discountTotal: 500 }));
  });
});

describe("configuration and provider failures", () => {
  it("answers 503 naming a provider whose secrets are missing, while the others work", async () => {
    const t = app({ CARD_A_WEBHOOK_SECRET: "", CRYPTO_IPN_SECRET: "" });
    const me = await person(t);
    const a = await expectError(await post(t, me, "/api/payments/card-a/checkout", { amount: 500 }), 503, "service_unavailable");
    expect(a.message).toContain("card-a");
    const c = await expectError(await post(t, me, "/api/payments/crypto/create", { amount: 10, currency: "BTC" }), 503, "service_unavailable");
    expect(c.message).toContain("crypto");
    const hook = await expectError(await t.request("/api/payments/card-a/webhook", json({}, { "x-signature": "00" })), 503, "service_unavailable");
    expect(hook.message).toContain("card-a");
    expect((await post(t, me, "/api/v1/payments/card-b/card-collection", { amount: 10, phoneNumber: "+15550100", email: "me@example.test" })).status).toBe(201);
  });

  it("builds the provider callback URLs from PAYMENTS_PUBLIC_URL, from the request's origin only outside production", async () => {
    const callbackOf = async (t: TestApp, who: Person) => {
      const intent = await t.request("http://elsewhere.example/api/payments/crypto/create", json({ amount: 20, currency: "USDT" }, who.headers));
      expect(intent.status).toBe(201);
      const link = await t.request("http://elsewhere.example/api/v1/payments/card-b/card-collection", json({ amount: 12, phoneNumber: "+15550100", email: "p@example.test" }, who.headers));
      expect(link.status).toBe(201);
      return [
        (providers.current.crypto.requests.filter((r) => r.path === "/v1/payment").at(-1)?.body as { ipn_callback_url: string }).ipn_callback_url,
        (providers.current.cardB.requests.filter((r) => r.path === "/v3/payments").at(-1)?.body as { redirect_url: string }).redirect_url,
      ];
    };
    const production = app({ NODE_ENV: "production" });
    expect(await callbackOf(production, await person(production))).toEqual(["https://api.example.test/api/payments/crypto/ipn", "https://api.example.test/api/v1/payments/card-b/redirect"]);
    // Production without it does not start (config.ts); in development the request's origin serves.
    expect(() => app({ NODE_ENV: "production", PAYMENTS_PUBLIC_URL: "" })).toThrow(/PAYMENTS_PUBLIC_URL is required in production when card-b or crypto payments are configured/);
    // A provider missing a setting still answers the 503 naming it.
    const unconfigured = app({ NODE_ENV: "production", PAYMENTS_PUBLIC_URL: "", CARD_B_SECRET_KEY: "", CRYPTO_API_KEY: "" });
    const payer = await person(unconfigured);
    const refused = await expectError(await post(unconfigured, payer, "/api/payments/crypto/create", { amount: 20, currency: "USDT" }), 503, "service_unavailable");
    expect(refused.message).toBe("crypto payments are not configured");
    const development = app({ NODE_ENV: "development", PAYMENTS_PUBLIC_URL: "" });
    expect(await callbackOf(development, await person(development))).toEqual(["http://elsewhere.example/api/payments/crypto/ipn", "http://elsewhere.example/api/v1/payments/card-b/redirect"]);
  });

  it("turns a provider error into 502 provider_error and marks the request failed", async () => {
    const t = app();
    const me = await person(t);
    providers.current.cardA.mode = "error";
    const body = await expectError(await post(t, me, "/api/payments/card-a/checkout", { amount: 700 }), 502, "provider_error");
    expect(body.message).toContain("card-a");
    expect(JSON.stringify(body)).not.toMatch(/stack|Internal Server Error/);
    const [row] = await queryRows(env.db.database.db, sql`select status, failure_reason from payments where user_id = ${me.id} order by created_at desc limit 1`);
    expect(row).toEqual({ status: "failed", failure_reason: "provider_error: status" });
  });

  it("gives up on a provider that does not answer in time (502) for every provider, leaving consistent records", async () => {
    const t = app();
    const me = await person(t);
    // Mobile money's token first, so the push itself is what goes unanswered.
    expect((await post(t, await person(t), "/api/v1/mobile-money/stk-push", { phoneNumber: "0712345678", amount: 100 })).status).toBe(201);
    const p = providers.current;
    p.cardA.mode = p.cardB.mode = p.crypto.mode = p.mobile.mode = "timeout";
    const started = Date.now();
    const results = await Promise.all([
      post(t, me, "/api/payments/card-a/checkout", { amount: 700 }),
      post(t, me, "/api/v1/payments/card-b/card-collection", { amount: 7, phoneNumber: "+15550100", email: "me@example.test" }),
      post(t, me, "/api/payments/crypto/create", { amount: 7, currency: "ETH" }),
      post(t, me, "/api/v1/mobile-money/stk-push", { phoneNumber: "0712345678", amount: 100 }),
    ]);
    expect(Date.now() - started).toBeLessThan(5_000);
    for (const res of results) {
      const body = await expectError(res, 502, "provider_error");
      expect(body.message).toMatch(/did not answer in time/);
    }
    const rows = await queryRows(env.db.database.db, sql`select provider, status from payments where user_id = ${me.id} order by provider`);
    // The push may still reach the phone, so that request stays pending for its callback or reconciliation.
    expect(rows).toEqual([
      { provider: "card-a", status: "failed" },
      { provider: "card-b", status: "failed" },
      { provider: "crypto", status: "failed" },
      { provider: "mobile-money", status: "pending" },
    ]);
  });

  it.each([
    ["card-a", "/api/payments/card-a/checkout", { amount: 700 }, ["not a url", "javascript:alert(1)", "/checkout/custom/1", "https://shop.card-a.test/a b"]],
    ["card-b", "/api/v1/payments/card-b/card-collection", { amount: 7, phoneNumber: "+15550100", email: "me@example.test" }, ["pay-here", "javascript:alert(1)", "ftp://checkout.card-b.test/pay/1", "https://"]],
  ] as const)("%s checkout link that is not an absolute http(s) URL: 502, the payment failed and its key freed", async (provider, path, body, links) => {
    const t = app();
    for (const link of links) {
      const me = await person(t);
      if (provider === "card-a") providers.current.cardA.answerNextUrl(link);
      else providers.current.cardB.answerNextLink(link);
      const key = `link-${crypto.randomUUID()}`;
      const res = await t.request(path, json(body, { ...me.headers, "idempotency-key": key }));
      const error = await expectError(res, 502, "provider_error");
      expect(error.message).toContain(provider);
      const rows = () => queryRows(env.db.database.db, sql`select status, failure_reason, idempotency_key from payments where user_id = ${me.id} order by status`);
      expect(await rows(), link).toEqual([{ status: "failed", failure_reason: "provider_error: body", idempotency_key: null }]);
      // The key was freed with the payment: the retry makes a new one (the provider now answers a real link).
      const retry = await t.request(path, json(body, { ...me.headers, "idempotency-key": key }));
      expect(retry.status, await retry.clone().text()).toBe(201);
      expect(retry.headers.get("idempotent-replayed")).toBeNull();
      expect(await rows()).toEqual([
        { status: "failed", failure_reason: "provider_error: body", idempotency_key: null },
        { status: "pending", failure_reason: null, idempotency_key: key },
      ]);
    }
  });

  it("keeps the routes the spec lists as not implemented absent", async () => {
    const t = app();
    const me = await person(t);
    for (const [method, path] of [
      ["POST", "/api/v1/payments/process"],
      ["GET", "/api/v1/payments/status/tx_1"],
      ["GET", "/api/v1/payments/methods/KE"],
      ["GET", "/api/v1/payments/methods/cards"],
      ["GET", "/api/v1/payments/search"],
      ["POST", "/api/v1/payments/tx_1/cancel"],
      ["GET", "/api/v1/payments/analytics"],
      ["GET", "/api/v1/payments/health"],
    ] as const) {
      const res = await t.request(path, { method, headers: { ...me.headers, "x-api-token": "x", ...(method === "POST" ? { "content-type": "application/json" } : {}) }, body: method === "POST" ? "{}" : undefined });
      await expectError(res, 404, "not_found");
    }
  });
});

describe("card-b card collection", () => {
  it("persists a pending transaction and answers the hosted checkout", async () => {
    const t = app();
    const me = await person(t);
    const res = await post(t, me, "/api/v1/payments/card-b/card-collection", { amount: 60000.5, phoneNumber: "+2348012345678", email: "me@example.test", currency: "NGN" });
    expect(res.status).toBe(201);
    const body = (await res.json()) as Record<string, string>;
    expect(body).toMatchObject({ status: "pending", currency: "NGN", transactionId: expect.stringMatching(/^cbtx_/), checkoutUrl: expect.stringContaining("/v3/hosted/pay/") });
    expect(String(body.checkoutUrl).endsWith(String(body.sessionId))).toBe(true);
    expect(providers.current.cardB.requests.at(-1)?.body).toMatchObject({
      tx_ref: body.transactionId,
      amount: 60000.5,
      currency: "NGN",
      redirect_url: "https://api.example.test/api/v1/payments/card-b/redirect",
      customer: { email: "me@example.test", phonenumber: "+2348012345678" },
    });
    expect(await paymentRow(env.db.database.db, body.transactionId as string)).toMatchObject({ status: "pending", coins: 6000 });
  });

  it("answers 400 naming each missing required field", async () => {
    const t = app();
    const me = await person(t);
    const full = { amount: 10, phoneNumber: "+15550100", email: "me@example.test" };
    for (const field of ["amount", "phoneNumber", "email"] as const) {
      const { [field]: _dropped, ...rest } = full;
      const body = await expectError(await post(t, me, "/api/v1/payments/card-b/card-collection", rest), 400, "invalid_input");
      expect(body.details?.map((d) => d.path)).toContain(field);
    }
    await expectError(await post(t, me, "/api/v1/payments/card-b/card-collection", { ...full, email: "not-an-email" }), 400, "invalid_input");
    await expectError(await post(t, me, "/api/v1/payments/card-b/card-collection", { ...full, amount: 0.4 }), 400, "invalid_input");
    // Finer than cents: it would be stored rounded and never match the amount the provider reports.
    const fine = await expectError(await post(t, me, "/api/v1/payments/card-b/card-collection", { ...full, amount: 10.123456789012 }), 400, "invalid_input");
    expect(fine.details).toEqual([{ path: "amount", message: "at most two decimal places" }]);
    expect((await post(t, me, "/api/v1/payments/card-b/card-collection", { ...full, amount: 10.12 })).status).toBe(201);
    await expectError(await post(t, me, "/api/payments/crypto/create", { amount: 10.001, currency: "BTC" }), 400, "invalid_input");
  });
});

describe("crypto intents", () => {
  it("creates an intent with the address, the coin amount, expiresAt in Unix seconds and instructions", async () => {
    const t = app();
    const me = await person(t);
    const res = await post(t, me, "/api/payments/crypto/create", { amount: 100, currency: "BTC" });
    expect(res.status).toBe(201);
    const body = (await res.json()) as Record<string, unknown>;
    const nowSeconds = Date.now() / 1000;
    expect(body).toMatchObject({ status: "pending", currency: "BTC", amount: 0.002, paymentId: expect.stringMatching(/^cpay_/), reference: expect.any(String), paymentAddress: expect.stringMatching(/^addr_btc_/) });
    expect(body.expiresAt as number).toBeGreaterThan(nowSeconds + 3_500);
    expect(body.expiresAt as number).toBeLessThan(nowSeconds + 3_700);
    expect(body.instructions).toContain(`0.002 BTC to ${body.paymentAddress as string}`);
    // A payment that finishes after expiresAt is still credited, so the instructions do not say otherwise.
    expect(body.instructions).toContain("guaranteed until that time");
    expect(body.instructions).not.toMatch(/not credited/);
    expect(providers.current.crypto.requests.at(-1)?.body).toMatchObject({ price_amount: 100, price_currency: "usd", pay_currency: "btc", order_id: body.paymentId, ipn_callback_url: "https://api.example.test/api/payments/crypto/ipn" });
    expect(await paymentRow(env.db.database.db, body.paymentId as string)).toMatchObject({ coins: 10_000, provider_ref: body.reference });
  });

  it("accepts only BTC, ETH, LTC, BCH, USDC and USDT", async () => {
    const t = app();
    const me = await person(t);
    for (const currency of ["DOGE", "btc", "", 1]) {
      const body = await expectError(await post(t, me, "/api/payments/crypto/create", { amount: 10, currency }), 400, "invalid_input");
      expect(body.details?.[0]?.path).toBe("currency");
    }
    for (const currency of ["ETH", "LTC", "BCH", "USDC", "USDT"]) expect((await post(t, me, "/api/payments/crypto/create", { amount: 10, currency })).status).toBe(201);
  });
});

describe("mobile-money STK push", () => {
  it("normalises phone numbers, signs the push with the timestamped password and caches the token", async () => {
    const t = app();
    const me = await person(t);
    const fake = providers.current.mobile;
    const tokensBefore = fake.tokensIssued();
    for (const phoneNumber of ["0712345678", "+254712345678", "254712345678", "0712 345 678"]) {
      const res = await post(t, me, "/api/v1/mobile-money/stk-push", { phoneNumber, amount: 100 });
      expect(res.status, await res.clone().text()).toBe(201);
      const body = (await res.json()) as Record<string, unknown>;
      expect(body).toMatchObject({ success: true, requestId: expect.stringMatching(/^mmreq_/), checkoutRequestId: expect.stringMatching(/^ws_CO_/), merchantRequestId: expect.any(String), message: expect.any(String), amount: 100, currency: "KES" });
      const push = fake.requests.at(-1)?.body as Record<string, unknown>;
      expect(push).toMatchObject({ PhoneNumber: "254712345678", PartyA: "254712345678", Amount: 100, BusinessShortCode: "174379" });
      expect(push.CallBackURL).toMatch(/^https:\/\/api\.example\.test\/api\/v1\/mobile-money\/callback\/[0-9a-f]{64}$/);
    }
    // The memory store of this app keeps the token: one OAuth call for four pushes.
    expect(fake.tokensIssued() - tokensBefore).toBe(1);
  });

  it("caches a token whose lifetime comes in fractional seconds", async () => {
    const t = app();
    const me = await person(t);
    const fake = providers.current.mobile;
    fake.setTokenExpiresIn("3599.9999");
    try {
      const tokensBefore = fake.tokensIssued();
      for (let i = 0; i < 2; i++) expect((await post(t, me, "/api/v1/mobile-money/stk-push", { phoneNumber: "0712345678", amount: 100 })).status).toBe(201);
      expect(fake.tokensIssued() - tokensBefore).toBe(1);
    } finally {
      fake.setTokenExpiresIn("3599");
    }
  });

  it("refuses other phone numbers and amounts with 400", async () => {
    const t = app();
    const me = await person(t);
    for (const phoneNumber of ["0812345678", "+255712345678", "071234567", "07123456789", "phone", ""]) {
      const body = await expectError(await post(t, me, "/api/v1/mobile-money/stk-push", { phoneNumber, amount: 100 }), 400, "invalid_input");
      expect(body.details?.[0]?.path).toBe("phoneNumber");
    }
    await expectError(await post(t, me, "/api/v1/mobile-money/stk-push", { phoneNumber: "0712345678", amount: 10.5 }), 400, "invalid_input");
    await expectError(await post(t, me, "/api/v1/mobile-money/stk-push", { phoneNumber: "0712345678" }), 400, "invalid_input");
  });
});

describe("mobile-money OAuth token", () => {
  /** Where the token of a consumer key is cached: the key's SHA-256, not the key itself, names it. */
  const tokenKey = (consumerKey: string) => `payments:mobile-money:oauth:${createHash("sha256").update(consumerKey).digest("hex").slice(0, 32)}`;
  const KEY = () => tokenKey(providers.current.mobile.env.MOBILE_MONEY_CONSUMER_KEY as string);
  const pushes = () => providers.current.mobile.requests.filter((r) => r.path === "/mpesa/stkpush/v1/processrequest").length;

  it("caches the token under a hash of the consumer key, and drops one the provider refuses (401), pushing once more with a new one", async () => {
    const t = app();
    const me = await person(t);
    const mobile = providers.current.mobile;
    expect((await post(t, me, "/api/v1/mobile-money/stk-push", { phoneNumber: "0712345678", amount: 100 })).status).toBe(201);
    const cached = await t.deps.kv.get(KEY());
    expect(cached).toEqual(expect.any(String));
    expect(JSON.stringify(await t.deps.kv.get("payments:mobile-money:oauth"))).toBe("null");
    // The provider no longer takes the cached token (revoked, or the credentials were rotated).
    await t.deps.kv.set(KEY(), "revoked-token", { ttlMs: 3_000_000 });
    const [tokensBefore, pushesBefore, promptsBefore] = [mobile.tokensIssued(), pushes(), mobile.stk.size];
    const res = await post(t, me, "/api/v1/mobile-money/stk-push", { phoneNumber: "0712345678", amount: 150 });
    expect(res.status, await res.clone().text()).toBe(201);
    expect(mobile.tokensIssued() - tokensBefore).toBe(1);
    // Two requests, one prompt: the refused one was never acted on.
    expect(pushes() - pushesBefore).toBe(2);
    expect(mobile.stk.size - promptsBefore).toBe(1);
    const renewed = await t.deps.kv.get(KEY());
    expect(renewed).not.toBe("revoked-token");
    expect(renewed).toEqual(expect.any(String));
    // The new token is the cached one from now on.
    expect((await post(t, me, "/api/v1/mobile-money/stk-push", { phoneNumber: "0712345678", amount: 160 })).status).toBe(201);
    expect(mobile.tokensIssued() - tokensBefore).toBe(1);
  });

  it("renews a refused token for the status query too, so the callback still settles", async () => {
    const t = app();
    const me = await person(t);
    const mobile = providers.current.mobile;
    const push = (await (await post(t, me, "/api/v1/mobile-money/stk-push", { phoneNumber: "0712345678", amount: 220 })).json()) as { requestId: string; checkoutRequestId: string };
    mobile.complete(push.checkoutRequestId, 0);
    await t.deps.kv.set(KEY(), "revoked-token", { ttlMs: 3_000_000 });
    const res = await deliver(t, mobile.callback(push.checkoutRequestId));
    expect(await res.json()).toMatchObject({ result: "credited" });
    expect(await t.deps.kv.get(KEY())).not.toBe("revoked-token");
    expect(await creditsOf(env.db.database.db, push.requestId)).toBe(1);
  });

  it("tries a new token once: a second 401 fails the push (nothing was sent), and so does a token call that times out after the first", async () => {
    const mobile = providers.current.mobile;
    let refuse = false;
    let hangTokenCalls = false;
    const fetchThroughProvider: typeof fetch = (input, init) => {
      const url = String(input instanceof Request ? input.url : input);
      if (refuse && url.endsWith("/mpesa/stkpush/v1/processrequest")) {
        return Promise.resolve(new Response(JSON.stringify({ requestId: "r", errorCode: "404.001.03", errorMessage: "Invalid Access Token" }), { status: 401 }));
      }
      if (hangTokenCalls && url.includes("/oauth/v1/generate")) {
        // A provider that takes the call and never answers: the caller's timeout ends it.
        return new Promise((_, reject) => init?.signal?.addEventListener("abort", () => reject(init.signal?.reason)));
      }
      return fetch(input, init);
    };
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE, env: providers.current.env, fetch: fetchThroughProvider });
    const me = await person(t);
    expect((await post(t, me, "/api/v1/mobile-money/stk-push", { phoneNumber: "0712345678", amount: 100 })).status).toBe(201);
    const statusOf = (amount: number) => queryRows<{ status: string }>(env.db.database.db, sql`select status from payments where user_id = ${me.id} and amount = ${amount}`);

    refuse = true;
    const tokensBefore = mobile.tokensIssued();
    const refused = await expectError(await post(t, me, "/api/v1/mobile-money/stk-push", { phoneNumber: "0712345678", amount: 110 }), 502, "provider_error");
    expect(mobile.tokensIssued() - tokensBefore).toBe(1);
    expect(refused.message).not.toMatch(/stays pending/);
    expect(await statusOf(110)).toEqual([{ status: "failed" }]);

    // Refused again, and the new token's call never answers: still nothing went out.
    await t.deps.kv.set(KEY(), "revoked-token", { ttlMs: 3_000_000 });
    hangTokenCalls = true;
    const timedOut = await expectError(await post(t, me, "/api/v1/mobile-money/stk-push", { phoneNumber: "0712345678", amount: 120 }), 502, "provider_error");
    expect(timedOut.message).toMatch(/did not answer in time/);
    expect(timedOut.message).not.toMatch(/stays pending/);
    expect(await statusOf(120)).toEqual([{ status: "failed" }]);
  });

  it("never sends a token cached for other credentials sharing the store", async () => {
    // One key prefix on Redis the two apps share, each through its own connection as two
    // instances would; the test reads every token cached under it.
    const shared = testRedis();
    onTestFinished(() => shared.cleanup());
    const kv = shared.store();
    const build = (extra: Record<string, string> = {}) =>
      buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE, env: { ...providers.current.env, ...extra }, kv: shared.store() });
    const current = build();
    const me = await person(current);
    expect((await post(current, me, "/api/v1/mobile-money/stk-push", { phoneNumber: "0712345678", amount: 100 })).status).toBe(201);
    // The same store, with credentials the provider does not know (an old or another app's key):
    // its own token call fails, instead of borrowing the token cached for the current key.
    const rotated = build({ MOBILE_MONEY_CONSUMER_KEY: "mm-old-consumer-key" });
    const pushesBefore = pushes();
    await expectError(await post(rotated, me, "/api/v1/mobile-money/stk-push", { phoneNumber: "0712345678", amount: 100 }), 502, "provider_error");
    expect(pushes()).toBe(pushesBefore);
    expect(await kv.get(tokenKey("mm-old-consumer-key"))).toBeNull();
    expect(await kv.get(KEY())).toEqual(expect.any(String));
  });
});

describe("Idempotency-Key on payment creation", () => {
  const withKey = (t: TestApp, who: Person, path: string, body: unknown, key: string) =>
    t.request(path, json(body, { ...who.headers, "idempotency-key": key }));

  it.each([
    ["card-a checkout", "/api/payments/card-a/checkout", { amount: 700, currency: "USD" }, () => providers.current.cardA],
    ["STK push", "/api/v1/mobile-money/stk-push", { phoneNumber: "0712345678", amount: 100 }, () => providers.current.mobile],
  ] as const)("%s: a retry with the same key replays the first answer and reaches the provider once", async (_name, path, body, fake) => {
    const t = app();
    const me = await person(t);
    const key = `pay-${crypto.randomUUID()}`;
    const before = fake().requests.length;
    const first = await withKey(t, me, path, body, key);
    expect(first.status, await first.clone().text()).toBe(201);
    const again = await withKey(t, me, path, body, key);
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await again.json()).toEqual(await first.json());
    // Token calls aside, the provider saw one payment.
    const payments = fake().requests.slice(before).filter((r) => !/oauth/i.test(r.path));
    expect(payments).toHaveLength(1);
    await expectError(await withKey(t, me, path, { ...body, amount: body.amount + 1 }, key), 409, "conflict");
  });

  it("STK push whose answer never arrives: the same key replays the 502, the phone gets one push, and paying it still credits once", async () => {
    const t = app();
    const me = await person(t);
    const mobile = providers.current.mobile;
    expect((await post(t, await person(t), "/api/v1/mobile-money/stk-push", { phoneNumber: "0712345678", amount: 100 })).status).toBe(201);
    const pushesBefore = mobile.stk.size;
    mobile.mode = "late";
    const key = `pay-${crypto.randomUUID()}`;
    const body = { phoneNumber: "0712345678", amount: 250 };
    const first = await withKey(t, me, "/api/v1/mobile-money/stk-push", body, key);
    const error = await expectError(first.clone(), 502, "provider_error");
    const paymentId = /payment (\S+) stays pending/.exec(error.message)?.[1] ?? "";
    expect(paymentId).toMatch(/^mmreq_/);
    expect(mobile.stk.size).toBe(pushesBefore + 1);

    mobile.mode = "ok";
    const again = await withKey(t, me, "/api/v1/mobile-money/stk-push", body, key);
    expect(again.status).toBe(502);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await again.json()).toEqual(await first.json());
    expect(mobile.stk.size).toBe(pushesBefore + 1);

    const pending = (await (await status(t, me, paymentId)).json()) as { paymentStatus: string };
    expect(pending.paymentStatus).toBe("pending");
    const push = [...mobile.stk.values()].at(-1);
    if (!push) throw new Error("no push recorded");
    mobile.complete(push.checkoutRequestId, 0);
    expect((await deliver(t, mobile.callback(push.checkoutRequestId))).status).toBe(200);
    expect(await paymentRow(env.db.database.db, paymentId)).toMatchObject({ status: "completed", provider_ref: push.checkoutRequestId });
    expect(await creditsOf(env.db.database.db, paymentId)).toBe(1);
  });

  it("STK push whose token call fails: nothing was sent, no payment is recorded, and the key is free for the retry", async () => {
    const t = app();
    const me = await person(t);
    const mobile = providers.current.mobile;
    mobile.mode = "timeout";
    const key = `pay-${crypto.randomUUID()}`;
    const body = { phoneNumber: "0712345678", amount: 120 };
    await expectError(await withKey(t, me, "/api/v1/mobile-money/stk-push", body, key), 502, "provider_error");
    expect(await queryRows(env.db.database.db, sql`select id from payments where user_id = ${me.id}`)).toEqual([]);
    mobile.mode = "ok";
    const retry = await withKey(t, me, "/api/v1/mobile-money/stk-push", body, key);
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBeNull();
  });

  /** What a process that died after the provider answered, before it recorded its own answer, leaves behind, aged past the takeover. */
  const dieBeforeRecording = (who: Person, key: string) =>
    queryRows(
      env.db.database.db,
      sql`update idempotency_keys set status = 'in_flight', response_status = null, response_body = null, completed_at = null, created_at = now() - interval '6 minutes'
          where user_id = ${who.id} and key = ${key} returning key`,
    );

  /** A new payer's STK push sent with an Idempotency-Key; `send` sends the same request again. */
  async function keyedStkPush(amount: number) {
    const t = app();
    const me = await person(t);
    const key = `pay-${crypto.randomUUID()}`;
    const send = () => withKey(t, me, "/api/v1/mobile-money/stk-push", { phoneNumber: "0712345678", amount }, key);
    const first = (await (await send()).json()) as { requestId: string };
    return { me, key, send, first, mobile: providers.current.mobile };
  }

  it("STK push whose request died before answering: the retry that takes the key over does not push again, and names the payment", async () => {
    const { me, key, send, first, mobile } = await keyedStkPush(180);
    const pushes = mobile.stk.size;
    expect(await dieBeforeRecording(me, key)).toHaveLength(1);

    const retry = await send();
    const error = await expectError(retry, 502, "provider_error");
    expect(error.message).toContain(`payment ${first.requestId} is pending`);
    expect(mobile.stk.size).toBe(pushes);
    // Recorded like any answer whose effect may exist: the next retry replays it.
    const again = await send();
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    await expectError(again, 502, "provider_error");
    expect(mobile.stk.size).toBe(pushes);
    expect(await queryRows(env.db.database.db, sql`select id from payments where user_id = ${me.id}`)).toEqual([{ id: first.requestId }]);
  });

  it("checkout whose request died before answering: the retry makes a new one, and the unseen one still credits if paid", async () => {
    const t = app();
    const me = await person(t);
    const key = `fund-${crypto.randomUUID()}`;
    const body = { amount: 900, currency: "USD" };
    const first = (await (await withKey(t, me, "/api/payments/card-a/checkout", body, key)).json()) as { fundingRequestId: string };
    await dieBeforeRecording(me, key);

    const retry = await withKey(t, me, "/api/payments/card-a/checkout", body, key);
    expect(retry.status).toBe(201);
    const second = (await retry.json()) as { fundingRequestId: string };
    expect(second.fundingRequestId).not.toBe(first.fundingRequestId);
    expect(await paymentRow(env.db.database.db, first.fundingRequestId)).toMatchObject({ status: "failed", failure_reason: "superseded by a retry with the same Idempotency-Key" });
    const replay = await withKey(t, me, "/api/payments/card-a/checkout", body, key);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(((await replay.json()) as { fundingRequestId: string }).fundingRequestId).toBe(second.fundingRequestId);
    // Had the first link reached the payer after all, their money is not lost.
    expect((await deliver(t, providers.current.cardA.orderWebhook(first.fundingRequestId))).status).toBe(200);
    expect(await creditsOf(env.db.database.db, first.fundingRequestId)).toBe(1);
  });

  it("a key reused after its 48 h retention sends a new STK push, even though an old payment carried it", async () => {
    const { me, key, send, first: old, mobile } = await keyedStkPush(90);
    // Two days on: the key's record has been swept, the payment is still there.
    await queryRows(env.db.database.db, sql`update payments set created_at = created_at - interval '49 hours' where id = ${old.requestId} returning id`);
    await queryRows(env.db.database.db, sql`delete from idempotency_keys where user_id = ${me.id} and key = ${key} returning key`);
    const pushes = mobile.stk.size;
    const again = await send();
    expect(again.status).toBe(201);
    expect(mobile.stk.size).toBe(pushes + 1);
    expect(await queryRows(env.db.database.db, sql`select status, idempotency_key from payments where id = ${old.requestId}`)).toEqual([{ status: "pending", idempotency_key: null }]);
  });

  it("checkout the provider refused: the failed payment lets go of the key, so the retry with it makes a new one", async () => {
    const t = app();
    const me = await person(t);
    const key = `fund-${crypto.randomUUID()}`;
    const body = { amount: 650, currency: "USD" };
    providers.current.cardA.mode = "error";
    await expectError(await withKey(t, me, "/api/payments/card-a/checkout", body, key), 502, "provider_error");
    providers.current.cardA.mode = "ok";
    const retry = await withKey(t, me, "/api/payments/card-a/checkout", body, key);
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBeNull();
    const rows = await queryRows(env.db.database.db, sql`select status, idempotency_key from payments where user_id = ${me.id} order by created_at`);
    expect(rows).toEqual([{ status: "failed", idempotency_key: null }, { status: "pending", idempotency_key: key }]);
  });

  it("answers 400 to a malformed key, before the provider is called", async () => {
    const t = app();
    const me = await person(t);
    const before = providers.current.cardA.requests.length;
    await expectError(await withKey(t, me, "/api/payments/card-a/checkout", { amount: 700, currency: "USD" }, "x".repeat(256)), 400, "invalid_input");
    expect(providers.current.cardA.requests.length).toBe(before);
  });
});

describe("payment status", () => {
  it("finds a payment of every store for its payer and an admin, and answers 404 to anyone else", async () => {
    const t = app();
    const payer = await person(t);
    const stranger = await person(t);
    const admin = await person(t, true);
    const ids = [
      ((await (await post(t, payer, "/api/payments/card-a/checkout", { amount: 600 })).json()) as { fundingRequestId: string }).fundingRequestId,
      ((await (await post(t, payer, "/api/v1/payments/card-b/card-collection", { amount: 6, phoneNumber: "+15550100", email: "p@example.test" })).json()) as { transactionId: string }).transactionId,
      ((await (await post(t, payer, "/api/payments/crypto/create", { amount: 6, currency: "USDT" })).json()) as { paymentId: string }).paymentId,
      ((await (await post(t, payer, "/api/v1/mobile-money/stk-push", { phoneNumber: "0712345678", amount: 600 })).json()) as { requestId: string }).requestId,
    ];
    const providersSeen: string[] = [];
    for (const id of ids) {
      const res = await status(t, payer, id);
      expect(res.status).toBe(200);
      const body = (await res.json()) as Record<string, unknown>;
      expect(body).toMatchObject({ status: "success", paymentId: id, paymentStatus: "pending", amount: expect.any(Number), currency: expect.any(String), timestamp: expect.any(Number) });
      providersSeen.push(body.provider as string);
      expect((await status(t, admin, id)).status).toBe(200);
      await expectError(await status(t, stranger, id), 404, "not_found");
    }
    expect(providersSeen).toEqual(["card-a", "card-b", "crypto", "mobile-money"]);
    for (const bad of ["fund_00000000000000000000000000", "nope", "usr_00000000000000000000000000", "%27%20or%201=1"]) await expectError(await status(t, payer, bad), 404, "not_found");
  });
});
