import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scriptSha } from "../../src/kv/scripts";
import { createRedisStore } from "../../src/node/kv-redis";
import { contextReadScript } from "../../src/services/ai/context-cache";
import { rateCheckScript } from "../../src/services/rate-limit/script";
import type { TestApp } from "../support/app";
import { aiApp, expectAiError, member, ok, post } from "../support/ai";
import { useTestEnvironment } from "../support/environment";
import { startFakeInference, type FakeInference } from "../support/fake-inference";
import { startRedisProxy, type RedisProxy } from "../support/redis-proxy";
import { randomSuffix } from "../support/services";

const env = useTestEnvironment();
let host: FakeInference;
let proxy: RedisProxy;
let t: TestApp;
const kvClosers: (() => Promise<void>)[] = [];
beforeAll(async () => {
  host = await startFakeInference({ model: "llama-test:8b" });
  // Each reply held back a little, so a read made after the limiter's answer would leave later.
  proxy = await startRedisProxy({ replyDelayMs: 30 });
  const kv = createRedisStore({ url: proxy.url, prefix: `test:ai-early:${randomSuffix()}:` });
  kvClosers.push(() => kv.close());
  t = aiApp(env, [host.url], {}, kv);
});
afterAll(async () => {
  await host.close();
  for (const close of kvClosers) await close();
  await proxy.close();
});

/**
 * The writes the store sent during `run`, which of them carried each script, and whether every
 * write that carried one left before the proxy passed back any answer: the client waited for no
 * round trip between them. (Two writes of one tick usually arrive as one chunk, but a busy machine
 * may split them; the answers are held back 30 ms, so a read made after the limiter's answer
 * could not come before it.)
 */
async function writesDuring(run: () => Promise<void>): Promise<{ rateCheck: number[]; contextRead: number[]; beforeAnyAnswer: boolean }> {
  const [rateSha, readSha] = await Promise.all([scriptSha(rateCheckScript), scriptSha(contextReadScript)]);
  const from = proxy.chunks.length;
  const repliesFrom = proxy.replies.length;
  await run();
  const chunks = proxy.chunks.slice(from);
  const carrying = (sha: string) => chunks.flatMap((c, i) => (c.text.includes(sha) ? [i] : []));
  const rateCheck = carrying(rateSha);
  const contextRead = carrying(readSha);
  const scripted = [...rateCheck, ...contextRead].map((i) => chunks[i]!.at);
  const firstAnswer = proxy.replies.slice(repliesFrom).find((r) => r.at >= Math.min(...scripted))?.at ?? Infinity;
  return { rateCheck, contextRead, beforeAnyAnswer: scripted.every((at) => at < firstAnswer) };
}

describe("the AI routes that use the caller's context", () => {
  it.each([
    ["/chat/response", (id: string) => ({ message: "I went hiking today!", userId: id })],
    ["/bio/optimize", () => ({ currentBio: "Weekend hiker and amateur baker who loves live jazz.", style: "friendly" })],
  ])("%s sends the read with the rate limiter's check, before any answer: one round trip, not two in a row", async (path, body) => {
    const me = await member(t, env.issuer);
    const sent = await writesDuring(async () => {
      await ok(await post(t, me, path, body(me.id)));
    });
    expect(sent.rateCheck).toHaveLength(1);
    expect(sent.contextRead).toHaveLength(1);
    expect(sent.beforeAnyAnswer).toBe(true);
    // The read found the profile, so the prompt has it.
    expect(host.chats().at(-1)?.messages[1]?.content).toContain("interests: hiking, baking, jazz");
  });

  it("a route without the context does not read it", async () => {
    const me = await member(t, env.issuer);
    const sent = await writesDuring(async () => {
      await ok(await post(t, me, "/experiences/pricing", { experienceType: "dinner", duration: 120, location: "Nairobi" }));
    });
    expect(sent.rateCheck).toHaveLength(1);
    expect(sent.contextRead).toEqual([]);
  });

  it("a request turned away before the service drops its read, and nothing is left unhandled", async () => {
    // A store that fails every call: the limiter serves anyway (fail open), the early read rejects,
    // and the invalid body is refused before anything waits for that read.
    const dead = createRedisStore({ url: "redis://127.0.0.1:1" });
    kvClosers.push(() => dead.close());
    const down = aiApp(env, [host.url], {}, dead);
    const me = await member(down, env.issuer);
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      await expectAiError(await post(down, me, "/chat/response", { message: "hi", userId: me.id }), 400, "invalid_message");
      // The store answers in order: once a later call has failed, the early read has failed too.
      // Node reports an unhandled rejection when the microtasks of that turn are done, so the next
      // turn (setImmediate) comes after any report.
      await expect(dead.get("marker")).rejects.toThrow();
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
    expect(unhandled).toEqual([]);
  });
});
