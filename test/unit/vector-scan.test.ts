import { describe, expect, it } from "vitest";
import { packVectors, similarities, unit } from "../../src/services/kb/vectors";
import { topicalVectors } from "../support/vectors";

describe("section vector scan", () => {
  it("gives every row its exact cosine with the question", () => {
    const { sections, queries } = topicalVectors({ count: 700, queries: 3, dim: 64, topics: 20, seed: 5 });
    const set = packVectors(sections);
    for (const q of queries) {
      const got = similarities(set, q);
      expect(got).toHaveLength(700);
      sections.forEach((s, r) => expect(got[r]).toBeCloseTo(s.reduce((sum, x, i) => sum + x * q[i]!, 0), 5));
    }
  });

  it("scores every row at zero when the question's dimension differs (the model changed)", () => {
    const set = packVectors([unit([1, 0, 0]), unit([0, 1, 0])]);
    expect(Array.from(similarities(set, unit([1, 0])))).toEqual([0, 0]);
  });

  it("refuses vectors of different dimensions in one set", () => {
    expect(() => packVectors([unit([1, 0]), unit([1, 0, 0])])).toThrow(/different dimensions/);
  });
});
