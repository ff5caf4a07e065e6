import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { getRequestListener } from "@hono/node-server";
import { afterEach, describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { parseConfig } from "../../src/config";
import { createJsonLogger } from "../../src/platform/logger";
import { buildNodeDeps, type NodeDeps } from "../../src/node/deps";
import { FAILURES_PER_ADDRESS, FAILURES_PER_USER } from "../../src/services/vouchers/redeem";
import { useTestEnvironment } from "../support/environment";
import { randomSuffix, TEST_REDIS_URL } from "../support/services";
import { json, newUser } from "../support/users";

// The per-address limit on failed voucher redemptions as the Node entry wires it (buildNodeDeps
// from the environment, the adapter's request listener, a real socket), with this test in the
// role of the reverse proxy: every request comes from 127.0.0.1 and carries the X-Forwarded-For
// a proxy would have appended to.

const env = useTestEnvironment();
const running: { server: Server; deps: NodeDeps }[] = [];

afterEach(async () => {
  for (const { server, deps } of running.splice(0)) {
    await new Promise((resolve) => server.close(resolve));
    await deps.close();
  }
});

async function serve(trustedProxyHops: string): Promise<string> {
  const config = parseConfig({
    NODE_ENV: "test",
    DATABASE_URL: env.db.url,
    REDIS_URL: TEST_REDIS_URL,
    KV_PREFIX: `client-address-${randomSuffix()}:`,
    OIDC_ISSUER: env.issuer.url,
    OIDC_AUDIENCE: env.issuer.audience,
    TRUSTED_PROXY_HOPS: trustedProxyHops,
  });
  const deps = await buildNodeDeps(config, createJsonLogger({ level: "silent" }));
  const app = createApp(deps);
  const server = createServer(getRequestListener((req, bindings) => app.fetch(req, bindings)));
  running.push({ server, deps });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function redeem(base: string, forwardedFor: string, headers?: Record<string, string>): Promise<number> {
  const who = headers ?? (await newUser(env.issuer)).headers;
  const res = await fetch(`${base}/api/v1/vouchers/redeem`, json({ code: "0000-0000-0000-0000" }, { ...who, "x-forwarded-for": forwardedFor }));
  await res.body?.cancel();
  return res.status;
}

/** Fails FAILURES_PER_ADDRESS times, spread over members so that no one member's own limit is reached. */
async function exhaustAddress(base: string, forwardedFor: (attempt: number) => string): Promise<void> {
  let attempt = 0;
  while (attempt < FAILURES_PER_ADDRESS) {
    const { headers } = await newUser(env.issuer);
    for (let i = 0; i < FAILURES_PER_USER - 1 && attempt < FAILURES_PER_ADDRESS; i++, attempt++) {
      expect(await redeem(base, forwardedFor(attempt), headers)).toBe(404);
    }
  }
}

describe("the voucher failure limit per client address on Node", () => {
  it("behind one trusted proxy, counts each client by the address the proxy appended", async () => {
    const base = await serve("1");
    await exhaustAddress(base, () => "198.51.100.7");
    expect(await redeem(base, "198.51.100.7")).toBe(429);
    // What the client sent ahead of the proxy's entry does not get it a fresh counter.
    expect(await redeem(base, "198.51.100.8, 198.51.100.7")).toBe(429);
    // Another client behind the same proxy still has all its attempts.
    expect(await redeem(base, "198.51.100.8")).toBe(404);
    expect(await redeem(base, "2001:db8::8")).toBe(404);
  });

  it("counts an IPv6 client by its /64: a fresh address in the same network shares the counter", async () => {
    const base = await serve("1");
    await exhaustAddress(base, (attempt) => `2001:db8:0:64::${(attempt + 1).toString(16)}`);
    expect(await redeem(base, "2001:db8:0:64:ffff:ffff:ffff:ffff")).toBe(429);
    expect(await redeem(base, "2001:db8:0:65::1")).toBe(404);
  });

  it("with no proxy trusted, counts the socket's peer and ignores X-Forwarded-For", async () => {
    const base = await serve("0");
    await exhaustAddress(base, (attempt) => `203.0.113.${attempt}`);
    expect(await redeem(base, "203.0.113.200")).toBe(429);
    expect(await redeem(base, "")).toBe(429);
  });

  it("falls back to the socket's peer, not a 500, when the header is not what the proxy writes", async () => {
    const base = await serve("2");
    // Two proxies trusted; none of these has two entries that read as addresses on its right.
    const malformed = ["", "garbage", "198.51.100.9", "198.51.100.9, not-an-address", ",,,", `${"9".repeat(4000)}, 10.0.0.2`];
    await exhaustAddress(base, (attempt) => malformed[attempt % malformed.length]!);
    expect(await redeem(base, "198.51.100.10")).toBe(429);
    expect(await redeem(base, "198.51.100.10, 10.0.0.2")).toBe(404);
  });
});
