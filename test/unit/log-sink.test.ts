import { afterEach, describe, expect, it, vi } from "vitest";
import { createBufferedSink, inWholeLines, PIPE_ATOMIC_BYTES } from "../../src/node/log-sink";
import { waitFor } from "../support/wait";

describe("buffered log sink", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  const collect = () => {
    const chunks: Buffer[] = [];
    const sink = createBufferedSink((chunk) => chunks.push(Buffer.from(chunk)));
    return { sink, text: () => Buffer.concat(chunks).toString("utf8"), chunks };
  };

  it("holds lines until flushed and writes them in order, one per line", () => {
    const { sink, text, chunks } = collect();
    sink('{"a":1}');
    sink('{"b":"é✓😀"}');
    expect(chunks).toHaveLength(0);
    sink.flush();
    expect(text()).toBe('{"a":1}\n{"b":"é✓😀"}\n');
    sink.flush();
    expect(chunks).toHaveLength(1);
  });

  it("encodes a turn's lines when the turn ends and writes them within 50 ms", async () => {
    const { sink, text, chunks } = collect();
    sink("one");
    sink("two");
    await new Promise((resolve) => setImmediate(resolve));
    expect(chunks).toHaveLength(0);
    await waitFor("the write", () => chunks.length > 0);
    expect(text()).toBe("one\ntwo\n");
    expect(chunks).toHaveLength(1);
  });

  it("writes on its own within 50 ms", () => {
    vi.useFakeTimers();
    const { sink, text } = collect();
    sink("one");
    vi.advanceTimersByTime(49);
    expect(text()).toBe("");
    vi.advanceTimersByTime(1);
    expect(text()).toBe("one\n");
  });

  it("writes a full chunk at once and passes a line longer than a chunk through whole", () => {
    const { sink, text, chunks } = collect();
    const line = "x".repeat(1000);
    for (let i = 0; i < 100; i++) sink(line);
    expect(chunks.length).toBeGreaterThan(0);
    const huge = "y".repeat(100_000);
    sink(huge);
    sink.flush();
    expect(text()).toBe(`${`${line}\n`.repeat(100)}${huge}\n`);
  });
});

describe("writes in whole lines (workers sharing one stdout)", () => {
  const pieces = (text: string, max: number) => {
    const out: string[] = [];
    inWholeLines((chunk) => out.push(Buffer.from(chunk).toString("utf8")), max)(Buffer.from(text));
    return out;
  };

  it("cuts a batch only after a newline, each piece at most the atomic size, nothing lost or reordered", () => {
    const lines = Array.from({ length: 300 }, (_, i) => JSON.stringify({ i, msg: "request", pad: "x".repeat(i % 97) }));
    const text = `${lines.join("\n")}\n`;
    const out = pieces(text, PIPE_ATOMIC_BYTES);
    expect(out.length).toBeGreaterThan(1);
    for (const piece of out) {
      expect(Buffer.byteLength(piece)).toBeLessThanOrEqual(PIPE_ATOMIC_BYTES);
      expect(piece.endsWith("\n")).toBe(true);
    }
    expect(out.join("")).toBe(text);
  });

  it("writes a line longer than the atomic size alone, and a short batch in one piece", () => {
    const long = "y".repeat(50);
    expect(pieces(`a\n${long}\nb\n`, 16)).toEqual(["a\n", `${long}\n`, "b\n"]);
    expect(pieces(`${long}`, 16)).toEqual([long]);
    expect(pieces("a\nb\n", 16)).toEqual(["a\nb\n"]);
  });
});
