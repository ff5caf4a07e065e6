import { describe, expect, it } from "vitest";
import { ApiError } from "../../src/errors";
import { rejectUnsafeText } from "../../src/http/router";

function refusal(value: unknown): { code: string; details: unknown } | undefined {
  try {
    rejectUnsafeText(value, "json");
    return undefined;
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return { code: err.code, details: err.details };
  }
}

const nested = (depth: number, leaf: unknown): unknown => (depth === 0 ? leaf : { a: [nested(depth - 1, leaf)] });

describe("rejectUnsafeText", () => {
  it("lets any well-formed text through: emoji (surrogate pairs), right-to-left marks, CJK, empty strings", () => {
    expect(refusal({ name: "Zoë 😀👍🏽", bio: "\u202eabc", tags: ["日本語", ""], n: 1, ok: true, none: null })).toBeUndefined();
  });

  it("names the first NUL or unpaired surrogate, in a value or a key, at any depth", () => {
    expect(refusal({ a: { b: ["ok", "x\u0000"] } })).toEqual({ code: "invalid_input", details: [{ path: "a.b.1", message: "text must be valid Unicode without NUL characters" }] });
    expect(refusal({ a: "\ud83d" })).toMatchObject({ details: [{ path: "a" }] });
    expect(refusal({ a: "\ude00x" })).toMatchObject({ details: [{ path: "a" }] });
    expect(refusal({ "k\u0000": 1 })).toMatchObject({ details: [{ path: "k\u0000" }] });
    expect(refusal("\u0000")).toMatchObject({ details: [{ path: "(root)" }] });
  });

  it("stops at 64 levels, so a value nested far deeper answers 400 instead of exhausting the stack", () => {
    expect(refusal(nested(31, "fine"))).toBeUndefined();
    expect(refusal(nested(40, "fine"))).toMatchObject({ code: "invalid_input", details: [{ message: "nested deeper than 64 levels" }] });
    expect(refusal(JSON.parse(`${"[".repeat(50_000)}${"]".repeat(50_000)}`))).toMatchObject({ code: "invalid_input" });
  });
});
