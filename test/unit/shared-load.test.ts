import { describe, expect, it } from "vitest";
import { sharedLoad, type LoadSlot } from "../../src/platform/shared-load";
import { waitFor } from "../support/wait";

/** A start function that counts its calls and hands out loads the test settles by hand. */
function loads<T>() {
  const made: { resolve(v: T): void; reject(e: unknown): void; promise: Promise<T> }[] = [];
  const start = () => {
    let resolve!: (v: T) => void;
    let reject!: (e: unknown) => void;
    const promise = new Promise<T>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    made.push({ resolve, reject, promise });
    return promise;
  };
  return { made, start };
}

describe("sharedLoad", () => {
  it("lets concurrent callers share one load, and keeps its value when asked to", async () => {
    const slot: LoadSlot<string> = {};
    const { made, start } = loads<string>();
    const calls = [1, 2, 3].map(() => sharedLoad(slot, start, { joinMs: 1_000, keep: true }));
    expect(made).toHaveLength(1);
    made[0]?.resolve("doc");
    expect(await Promise.all(calls)).toEqual(["doc", "doc", "doc"]);
    expect(await sharedLoad(slot, start, { joinMs: 1_000, keep: true })).toBe("doc");
    expect(made).toHaveLength(1);
  });

  it("starts afresh after a load that is not kept, and after a failed one", async () => {
    const slot: LoadSlot<number> = {};
    const { made, start } = loads<number>();
    const first = sharedLoad(slot, start, { joinMs: 1_000, keep: false });
    made[0]?.resolve(1);
    expect(await first).toBe(1);
    const second = sharedLoad(slot, start, { joinMs: 1_000, keep: true });
    expect(made).toHaveLength(2);
    made[1]?.reject(new Error("down"));
    await expect(second).rejects.toThrow("down");
    const third = sharedLoad(slot, start, { joinMs: 1_000, keep: true });
    expect(made).toHaveLength(3);
    made[2]?.resolve(3);
    expect(await third).toBe(3);
  });

  it("gives up on a load that never settles (its request was cancelled) and starts its own, which later callers join", async () => {
    const slot: LoadSlot<string> = {};
    const { made, start } = loads<string>();
    // The first caller's load never settles, as on Workers when its request is cancelled.
    void sharedLoad(slot, start, { joinMs: 50, keep: true });
    const started = Date.now();
    const joiner = sharedLoad(slot, start, { joinMs: 50, keep: true });
    // The joiner gives up after 50 ms and begins a load of its own.
    await waitFor("the joiner's own load", () => made.length === 2, { timeout: 1_000 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    const late = sharedLoad(slot, start, { joinMs: 50, keep: true });
    made[1]?.resolve("fresh");
    expect(await joiner).toBe("fresh");
    expect(await late).toBe("fresh");
    expect(made).toHaveLength(2);
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
