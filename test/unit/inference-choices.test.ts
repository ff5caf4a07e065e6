import { describe, expect, it } from "vitest";
import { jsonSchemaOf } from "../../src/services/inference";
import { choicesOf } from "../../src/services/inference/choices";

const upper = (raw: string) => raw.trim().toUpperCase();

describe("choicesOf", () => {
  it("sends an enum of the allowed values, at most as many items as there are values", () => {
    expect(jsonSchemaOf(choicesOf(["S1", "S2", "S3"], 8, () => undefined))).toEqual({ type: "array", maxItems: 3, items: { type: "string", enum: ["S1", "S2", "S3"] } });
    expect(jsonSchemaOf(choicesOf(["S1", "S2", "S3"], 2, () => undefined))).toMatchObject({ maxItems: 2 });
  });

  it("admits only the empty list when there is nothing to choose from, in a form grammar-based decoders accept", () => {
    const schema = choicesOf([], 8, () => undefined);
    expect(jsonSchemaOf(schema)).toEqual({ type: "array", maxItems: 0, items: { type: "string" } });
    expect(schema.parse(["S1", "anything"])).toEqual([]);
  });

  it("parses leniently: maps what it can, drops the rest and repeats, keeps at most max", () => {
    const allowed = ["S1", "S2", "S3"] as const;
    const resolve = (raw: string) => allowed.find((v) => v === upper(raw));
    const schema = choicesOf(allowed, 2, resolve);
    expect(schema.parse(["s2", "S9", "S2", "made up"])).toEqual(["S2"]);
    expect(schema.parse(["S3", "S1", "S2"])).toEqual(["S3", "S1"]);
    expect(schema.safeParse("S1").success).toBe(false);
  });
});
