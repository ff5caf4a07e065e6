import { env } from "cloudflare:workers";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { createWorker } from "../../workers/api";
import { createUpstashStore } from "../../src/kv/upstash";
import { addressFailuresKeyOf, FAILURES_PER_ADDRESS } from "../../src/services/vouchers/redeem";
import { accessToken } from "./access-token";
import { workerBindings } from "./bindings";

// The client's address on the Worker is the CF-Connecting-IP Cloudflare's edge sets (replacing
// any the client sent); X-Forwarded-For, which the client can write, plays no part.

const worker = createWorker();
const bindings = workerBindings(env, "client-address");
const store = createUpstashStore({ url: inject("upstashUrl"), token: inject("upstashToken"), prefix: String(bindings.KV_PREFIX) });

async function call(path: string, init: RequestInit = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const ctx = createExecutionContext();
  const res = await worker.fetch(new Request(`http://api.test${path}`, init), bindings, ctx);
  const body = (await res.json()) as Record<string, unknown>;
  await waitOnExecutionContext(ctx);
  return { status: res.status, body };
}

async function signIn(): Promise<Record<string, string>> {
  const headers = { authorization: `Bearer ${await accessToken(`edge-${crypto.randomUUID()}`)}` };
  const me = await call("/v1/auth/test", { headers });
  expect(me.status, JSON.stringify(me.body)).toBe(200);
  return headers;
}

const redeemBadCode = async (headers: Record<string, string>) =>
  (await call("/api/v1/vouchers/redeem", { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify({ code: "0000-0000-0000-0000" }) })).status;

describe("the client's address on the Worker", () => {
  it("counts a failed voucher redemption against CF-Connecting-IP, not X-Forwarded-For", async () => {
    const member = await signIn();
    expect(await redeemBadCode({ ...member, "cf-connecting-ip": "203.0.113.9", "x-forwarded-for": "198.51.100.1" })).toBe(404);
    expect(await store.get(addressFailuresKeyOf("203.0.113.9"))).toBe("1");
    expect(await store.get(addressFailuresKeyOf("198.51.100.1"))).toBeNull();
    // IPv6 in the one spelling the Node entry uses too.
    expect(await redeemBadCode({ ...member, "cf-connecting-ip": "2001:DB8:0::9" })).toBe(404);
    expect(await store.get(addressFailuresKeyOf("2001:db8::9"))).toBe("1");
  });

  it("stops an address that failed too often, and only that address", async () => {
    await store.incr(addressFailuresKeyOf("203.0.113.50"), FAILURES_PER_ADDRESS, 3_600_000);
    const member = await signIn();
    expect(await redeemBadCode({ ...member, "cf-connecting-ip": "203.0.113.50" })).toBe(429);
    expect(await redeemBadCode({ ...member, "cf-connecting-ip": "203.0.113.50", "x-forwarded-for": "203.0.113.51" })).toBe(429);
    expect(await redeemBadCode({ ...member, "cf-connecting-ip": "203.0.113.51" })).toBe(404);
  });

  it("applies no address limit, rather than one from a client's header, when CF-Connecting-IP is missing or not an address", async () => {
    const member = await signIn();
    expect(await redeemBadCode({ ...member, "x-forwarded-for": "203.0.113.60" })).toBe(404);
    expect(await redeemBadCode({ ...member, "cf-connecting-ip": "not-an-address" })).toBe(404);
    expect(await store.get(addressFailuresKeyOf("203.0.113.60"))).toBeNull();
    expect(await store.get(addressFailuresKeyOf("not-an-address"))).toBeNull();
  });
});
