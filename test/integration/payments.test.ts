import { afterEach, describe, expect, it } from "vitest";
import { buildTestApp, type TestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { expectError } from "../support/errors";
import { ENTERPRISE, signIn, type Person } from "../support/people";
import { creditsOf, deliver, expectLedgerBalanced, paymentRow, useProviders } from "../support/payments";
import { json } from "../support/users";

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
        attributes: { custom_price: 500, checkout_data: { custom: { funding_request_id: body.fundingRequestId } } },
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
