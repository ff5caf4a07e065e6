import { describe, expect, it } from "vitest";
import { buildIvf, IVF_MIN_ROWS } from "../../src/services/kb/ivf";
import { candidateSimilarities, packVectors, packVectorsInChunks, similarities } from "../../src/services/kb/vectors";
import { recallAt, topicalVectors, topRows } from "../support/vectors";

const exactTop = (set: ReturnType<typeof packVectors>, query: Float32Array, k: number) => {
  const all = similarities(set, query);
  return topRows(Array.from(all, (_, i) => i), all, k);
};

describe("section vector index (IVF)", () => {
  it("finds at least 95% of the exact top 10 on topical vectors", () => {
    const { sections, queries } = topicalVectors({ count: 2_000, queries: 100, dim: 128, topics: 60, seed: 5 });
    const set = packVectors(sections);
    expect(set.ivf?.lists).toBe(45);
    let recall = 0;
    let scanned = 0;
    for (const q of queries) {
      const { rows, cosines } = candidateSimilarities(set, q, []);
      scanned += rows.length;
      recall += recallAt(10, exactTop(set, q, 10), topRows(rows, cosines, 10));
    }
    expect(recall / queries.length).toBeGreaterThanOrEqual(0.95);
    // Sub-linear: well under half the rows are scored per question.
    expect(scanned / queries.length).toBeLessThan(sections.length / 2);
  });

  it("always scores the required rows, with their exact cosine", () => {
    const { sections, queries } = topicalVectors({ count: 1_000, queries: 1, dim: 64, topics: 30, seed: 9 });
    const set = packVectors(sections);
    const q = queries[0]!;
    const exact = similarities(set, q);
    const far = Array.from(exact, (_, i) => i).sort((a, b) => exact[a]! - exact[b]!).slice(0, 5);
    const { rows, cosines } = candidateSimilarities(set, q, far);
    for (const r of far) {
      const at = rows.indexOf(r);
      expect(at).toBeGreaterThanOrEqual(0);
      expect(cosines[at]).toBeCloseTo(exact[r]!, 6);
    }
    expect([...rows]).toEqual([...rows].sort((a, b) => a - b));
  });

  it("is built the same way from the same vectors", () => {
    const { sections } = topicalVectors({ count: 600, queries: 0, dim: 32, topics: 20, seed: 3 });
    const a = packVectors(sections).ivf!;
    const b = packVectors(sections).ivf!;
    expect([...a.members]).toEqual([...b.members]);
    expect([...a.offsets]).toEqual([...b.offsets]);
    expect(a.offsets[a.lists]).toBe(600);
    expect(new Set(a.members).size).toBe(600);
  });

  it("keeps the exact scan below the size threshold", () => {
    const { sections, queries } = topicalVectors({ count: IVF_MIN_ROWS - 1, queries: 3, dim: 32, topics: 10, seed: 4 });
    const set = packVectors(sections);
    expect(set.ivf).toBeUndefined();
    for (const q of queries) {
      const { rows, cosines } = candidateSimilarities(set, q, []);
      expect([...rows]).toEqual(sections.map((_, i) => i));
      expect([...cosines]).toEqual([...similarities(set, q)]);
    }
  });

  it("scores every row at zero when the query's dimension differs (the model changed)", () => {
    const { sections } = topicalVectors({ count: 600, queries: 0, dim: 32, topics: 10, seed: 6 });
    const set = packVectors(sections);
    const { rows, cosines } = candidateSimilarities(set, new Float32Array(16), []);
    expect(rows.length).toBe(600);
    expect(cosines.every((c) => c === 0)).toBe(true);
  });

  it("never makes more lists than rows", () => {
    const { sections } = topicalVectors({ count: 5, queries: 0, dim: 8, topics: 2, seed: 1 });
    const set = packVectors(sections);
    const ivf = buildIvf(set.data, set.count, set.dim, 10);
    expect(ivf.lists).toBe(5);
    expect(ivf.offsets[5]).toBe(5);
  });
});

describe("chunked index build", () => {
  it("gives the same lists as the one-go build", async () => {
    const { sections } = topicalVectors({ count: 700, queries: 0, dim: 32, topics: 20, seed: 8 });
    const a = packVectors(sections).ivf!;
    const b = (await packVectorsInChunks(sections)).ivf!;
    expect([...b.members]).toEqual([...a.members]);
    expect([...b.offsets]).toEqual([...a.offsets]);
    expect([...b.centroids]).toEqual([...a.centroids]);
  });
});
