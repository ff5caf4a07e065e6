import { afterEach, describe, expect, it, vi } from "vitest";
import type { KeyValueStore } from "../../src/kv/port";
import { fixedClock } from "../../src/platform/clock";
import { HEARTBEAT_MS } from "../../src/services/matching/event-streams";
import { eventChannel } from "../../src/services/matching/events";
import { buildTestApp, type TestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { ENTERPRISE, signIn } from "../support/people";
import { appStore } from "../support/redis";
import { json } from "../support/users";
import { waitFor as waitUntil } from "../support/wait";

const env = useTestEnvironment();
afterEach(() => vi.useRealTimers());

const withoutSubscribe = (): KeyValueStore => {
  const { subscribe: _omitted, ...rest } = appStore();
  return rest as KeyValueStore;
};
const paths = [
  { path: "the event hub", kv: appStore },
  { path: "a polling stream", kv: withoutSubscribe },
];

interface Reading {
  text(): string;
  /** Resolves once the body has ended, with the time it ended; fails after `ms`. */
  ended(ms: number): Promise<number>;
  /** Waits until the text holds `needle`; fails after `ms`. */
  until(needle: string, ms?: number): Promise<void>;
  close(): Promise<void>;
}

function read(res: Response): Reading {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let endedAt: number | undefined;
  const pump = (async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        endedAt = Date.now();
        return;
      }
      text += decoder.decode(value, { stream: true });
    }
  })();
  const waitFor = (ok: () => boolean, ms: number, what: string): Promise<void> =>
    waitUntil(what, ok, { timeout: ms }).then(
      () => undefined,
      (err: Error) => {
        throw new Error(`${err.message}; stream so far: ${JSON.stringify(text)}`);
      },
    );
  return {
    text: () => text,
    async ended(ms) {
      await waitFor(() => endedAt !== undefined, ms, "the stream to end");
      return endedAt as number;
    },
    until: (needle, ms = 5_000) => waitFor(() => text.includes(needle), ms, JSON.stringify(needle)),
    async close() {
      await reader.cancel().catch(() => {});
      await pump.catch(() => {});
    },
  };
}

const wink = (t: TestApp, from: { headers: Record<string, string> }, toUserId: string) => t.request("/api/v1/winks", json({ toUserId, message: "hello" }, from.headers));

describe.each(paths)("an event stream opened with an access token ($path)", ({ kv }) => {
  it("ends at the token's exp, and lets go of its subscription", async () => {
    const expS = Math.floor(Date.now() / 1000) + 600;
    // The app's clock stands 400 ms before the token's expiry.
    const clock = fixedClock(expS * 1000 - 400);
    const store = kv();
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE, clock, kv: store });
    const me = await signIn(t, env.issuer);
    const token = await env.issuer.sign({ sub: me.sub, email: me.email, roles: [] }, { expiresIn: expS });
    const opened = Date.now();
    const res = await t.request("/api/v1/matches/events", { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    const stream = read(res);
    try {
      await stream.until(": connected");
      const endedAt = await stream.ended(5_000);
      // At the expiry, not at once.
      expect(endedAt - opened).toBeGreaterThanOrEqual(350);
      expect(t.logs).toContainEqual(expect.objectContaining({ level: "info", msg: "event stream ended: its credential is no longer valid", userId: me.id, reason: "expired" }));
      if (store.subscribe) await vi.waitFor(async () => expect(await store.publish(eventChannel(me.id), "ping")).toBe(0), { timeout: 5_000 });
    } finally {
      await stream.close();
    }
  });
});

describe.each(paths)("an event stream opened with an API key ($path)", ({ kv }) => {
  it("goes on while the key is valid, and ends at the first heartbeat after the key is revoked", async () => {
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE, kv: kv() });
    const [admin, other, third] = [await signIn(t, env.issuer, { admin: true }), await signIn(t, env.issuer), await signIn(t, env.issuer)];
    const created = (await (await t.request("/api/v1/admin/api-keys", json({ name: "stream" }, admin.headers))).json()) as { keyId: string; key: string };
    const keyHeaders = { authorization: `Bearer ${created.key}` };
    // Only the heartbeat intervals run on the fake clock; database and stream I/O stay real.
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    const res = await t.request("/api/v1/matches/events", { headers: keyHeaders });
    expect(res.status).toBe(200);
    const stream = read(res);
    try {
      await stream.until(": connected");
      // A heartbeat with the key still valid changes nothing.
      vi.advanceTimersByTime(HEARTBEAT_MS);
      await stream.until(": heartbeat");
      expect((await wink(t, other, admin.id)).status).toBe(201);
      await stream.until("event: wink.received", 5_000);

      expect((await t.request(`/api/v1/admin/api-keys/${created.keyId}`, { method: "DELETE", headers: admin.headers })).status).toBe(200);
      vi.advanceTimersByTime(HEARTBEAT_MS);
      await stream.ended(5_000);
      expect(t.logs).toContainEqual(expect.objectContaining({ msg: "event stream ended: its credential is no longer valid", userId: admin.id, reason: "api key revoked or expired" }));
      // Nothing made after the revocation reaches the old stream, though a stream opened with a
      // valid credential gets it.
      const before = stream.text();
      const marker = read(await t.request("/api/v1/matches/events", { headers: admin.headers }));
      try {
        await marker.until(": connected");
        expect((await wink(t, third, admin.id)).status).toBe(201);
        await marker.until("event: wink.received", 5_000);
      } finally {
        await marker.close();
      }
      expect(stream.text()).toBe(before);
      expect(before.match(/event: wink\.received/g)).toHaveLength(1);
    } finally {
      await stream.close();
    }
  });
  it("ends at the key's expiresAt", async () => {
    const clock = fixedClock(Date.now());
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE, clock, kv: kv() });
    const admin = await signIn(t, env.issuer, { admin: true });
    const created = (await (await t.request("/api/v1/admin/api-keys", json({ expiresAt: new Date(clock.now() + 400).toISOString() }, admin.headers))).json()) as { key: string };
    const opened = Date.now();
    const res = await t.request("/api/v1/matches/events", { headers: { authorization: `Bearer ${created.key}` } });
    expect(res.status).toBe(200);
    const stream = read(res);
    try {
      expect((await stream.ended(5_000)) - opened).toBeGreaterThanOrEqual(350);
      expect(stream.text()).toContain(": connected");
      expect(t.logs).toContainEqual(expect.objectContaining({ msg: "event stream ended: its credential is no longer valid", userId: admin.id, reason: "expired" }));
    } finally {
      await stream.close();
    }
  });
});

describe.each(paths)("an event stream opened with a token ($path)", ({ kv }) => {
  it("ends at the first heartbeat after its member deleted their account", async () => {
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE, kv: kv() });
    const member = await signIn(t, env.issuer);
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    const stream = read(await t.request("/api/v1/matches/events", { headers: member.headers }));
    try {
      await stream.until(": connected");
      vi.advanceTimersByTime(HEARTBEAT_MS);
      await stream.until(": heartbeat");
      expect((await t.request("/api/v1/account", { ...json({ confirm: "DELETE" }, member.headers), method: "DELETE" })).status).toBe(200);
      vi.advanceTimersByTime(HEARTBEAT_MS);
      await stream.ended(5_000);
      expect(t.logs).toContainEqual(expect.objectContaining({ msg: "event stream ended: its credential is no longer valid", userId: member.id, reason: "account deleted" }));
    } finally {
      await stream.close();
    }
  });
});
