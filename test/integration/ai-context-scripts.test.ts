import { describe, expect, it } from "vitest";
import type { KeyValueStore } from "../../src/kv/port";
import { contextReadScript, contextStoreScript, noteProfileChange } from "../../src/services/ai/context-cache";
import { useEveryStore } from "../support/every-store";

const onEveryStore = useEveryStore();

/** Reads and writes of the AI context cache, with what plain commands then see. */
async function scenario(kv: KeyValueStore): Promise<unknown[]> {
  const out: unknown[] = [];
  const read = (user: string) => kv.eval(contextReadScript, [`ai:ctx:u:${user}`, "ai:ctx:hits", `ai:ctx:saved:${user}`], []);
  out.push(await read("a"), await kv.get("ai:ctx:hits"));
  out.push(await kv.eval(contextStoreScript, ["ai:ctx:u:a", "ai:ctx:index"], ['{"conversation":["hé 👋"]}', 600_000, 1_000_600_000, "a"]));
  out.push(await read("a"), await read("a"), await read("b"), await kv.get("ai:ctx:hits"));
  await kv.eval(contextStoreScript, ["ai:ctx:u:b", "ai:ctx:index"], ["{}", 600_000, 1_000_000_000, "b"]);
  await kv.eval(contextStoreScript, ["ai:ctx:u:a", "ai:ctx:index"], ["{}", 600_000, 1_000_900_000, "a"]);
  out.push(await kv.zrevrangeWithScores("ai:ctx:index", 0, -1), await read("a"));
  const ttl = await kv.pttl("ai:ctx:u:a");
  out.push(ttl > 590_000 && ttl <= 600_000);
  // A profile save's stamp comes back with the entry, and without one.
  await noteProfileChange(kv, "a", 1_000_000_123);
  await noteProfileChange(kv, "c", 1_000_000_456);
  out.push(await read("a"), await read("c"));
  return out;
}

describe("the AI context cache scripts", () => {
  it("answer identically on the in-memory store, Redis and Upstash", async () => {
    const results = await onEveryStore(scenario);
    const none = { entry: null, profileSavedAt: null };
    expect(results.memory).toEqual([
      none,
      null,
      null,
      { entry: '{"conversation":["hé 👋"]}', profileSavedAt: null },
      { entry: '{"conversation":["hé 👋"]}', profileSavedAt: null },
      none,
      "2",
      [
        { member: "a", score: 1_000_900_000 },
        { member: "b", score: 1_000_000_000 },
      ],
      { entry: "{}", profileSavedAt: null },
      true,
      { entry: "{}", profileSavedAt: 1_000_000_123 },
      { entry: null, profileSavedAt: 1_000_000_456 },
    ]);
    expect(results.redis).toEqual(results.memory);
    expect(results.upstash).toEqual(results.memory);
  });
});
