import { afterEach, describe, expect, it, vi } from "vitest";
import { HEARTBEAT_MS } from "../../src/services/matching/event-streams";
import { buildTestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { signIn } from "../support/people";
import { waitFor } from "../support/wait";

const env = useTestEnvironment();

afterEach(() => {
  vi.useRealTimers();
});

describe("the live event stream when nothing happens", () => {
  it("sends a heartbeat comment at least every 25 s and stops when the client goes away", async () => {
    expect(HEARTBEAT_MS).toBeLessThan(25_000);
    // Only the heartbeat interval runs on the fake clock; database and stream I/O stay real.
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer });
    const me = await signIn(t, env.issuer);
    const controller = new AbortController();
    const res = await t.request("/api/v1/matches/events", { headers: { ...me.headers, accept: "text/event-stream" }, signal: controller.signal });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    const readUntil = async (needle: string) => {
      while (!text.includes(needle)) {
        const { done, value } = await reader.read();
        if (done) throw new Error(`stream ended before ${JSON.stringify(needle)}`);
        text += decoder.decode(value, { stream: true });
      }
    };
    await readUntil(": connected");
    expect(text).not.toContain(": heartbeat");
    vi.advanceTimersByTime(HEARTBEAT_MS);
    await readUntil(": heartbeat");
    vi.advanceTimersByTime(HEARTBEAT_MS);
    await readUntil(": heartbeat\n\n: heartbeat");
    expect(vi.getTimerCount()).toBe(1);

    await reader.cancel();
    controller.abort();
    // The interval is cleared once the stream notices the client left.
    await waitFor("the heartbeat interval to be cleared", () => vi.getTimerCount() === 0);
  });
});
