import type { AddressInfo } from "node:net";
import { serve, type ServerType } from "@hono/node-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildTestApp, type TestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { expectError } from "../support/errors";
import { startFakePlatformAgent, type FakePlatformAgent } from "../support/fake-platform-agent";
import { ENTERPRISE } from "../support/people";
import { json, newUser } from "../support/users";

const env = useTestEnvironment();
let agent: FakePlatformAgent;
let gated: FakePlatformAgent;

const appWith = (url: string | undefined) =>
  buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE, env: url ? { PLATFORM_AGENT_URL: url, PLATFORM_AGENT_TIMEOUT_MS: "2000" } : {} });

beforeAll(async () => {
  [agent, gated] = await Promise.all([startFakePlatformAgent(), startFakePlatformAgent({ gated: true })]);
});
afterAll(async () => {
  await Promise.all([agent?.close(), gated?.close()]);
});

async function readEvents(res: Response): Promise<string> {
  return res.text();
}

describe("POST /api/agent (native clients)", () => {
  it("forwards the caller's own token and streams the agent's events back", async () => {
    const t = appWith(agent.url);
    const user = await newUser(env.issuer);
    const res = await t.request("/api/agent", json({ message: "hi" }, { ...user.headers, cookie: "a=b" }));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const text = await readEvents(res);
    expect(text).toContain('data: {"text":"Hello"}');
    expect(text).toContain("event: done");
    const seen = agent.calls.at(-1);
    expect(seen?.authorization).toBe(`Bearer ${user.token}`);
    expect(seen?.cookie).toBeUndefined();
    expect(JSON.parse(seen?.body ?? "")).toEqual({ message: "hi" });
  });

  it("passes each event on as it arrives, and a client that hangs up cancels the agent call", async () => {
    const t = appWith(gated.url);
    const server: ServerType = serve({ fetch: t.app.fetch, port: 0, hostname: "127.0.0.1" });
    await new Promise<void>((resolve) => server.once("listening", () => resolve()));
    try {
      const user = await newUser(env.issuer);
      const hangUp = new AbortController();
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api/agent`, { ...json({ message: "stream" }, user.headers), signal: hangUp.signal });
      expect(res.status).toBe(200);
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      gated.release();
      // The first event reaches us while the agent still holds the second one back.
      const first = await reader.read();
      expect(new TextDecoder().decode(first.value)).toContain('{"text":"Hello"}');
      const call = gated.calls.at(-1);
      hangUp.abort();
      await call?.finished;
      expect(call?.closedEarly).toBe(true);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it("answers 503 naming the platform agent when it is not configured", async () => {
    const t = appWith(undefined);
    const user = await newUser(env.issuer);
    const body = await expectError(await t.request("/api/agent", json({ message: "hi" }, user.headers)), 503, "service_unavailable");
    expect(body.message).toContain("platform agent");
  });

  it("answers 503 when the agent fails, and passes its 4xx refusals through", async () => {
    const t = appWith(agent.url);
    const user = await newUser(env.issuer);
    agent.refuseWith(502);
    try {
      await expectError(await t.request("/api/agent", json({}, user.headers)), 503, "service_unavailable");
      agent.refuseWith(422);
      const res = await t.request("/api/agent", json({}, user.headers));
      expect(res.status).toBe(422);
      expect(await res.json()).toEqual({ error: "refused", status: 422 });
    } finally {
      agent.refuseWith(undefined);
    }
  });

  it("answers 503 when the agent is unreachable", async () => {
    const t = appWith("http://127.0.0.1:9/agent");
    const user = await newUser(env.issuer);
    await expectError(await t.request("/api/agent", json({}, user.headers)), 503, "service_unavailable");
  });

  it("refuses callers without a token and admin API keys, before calling the agent", async () => {
    const t = appWith(agent.url);
    const before = agent.calls.length;
    await expectError(await t.request("/api/agent", json({})), 401, "unauthorized");
    await expectError(await t.request("/api/agent", json({}, { authorization: "Bearer not-a-token" })), 401, "unauthorized");
    expect(agent.calls.length).toBe(before);
  });
});
