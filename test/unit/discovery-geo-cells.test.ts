import { describe, expect, it } from "vitest";
import { MAX_LISTED_CELLS, cellOf, cellsCovering, positionBox } from "../../src/services/discovery/geo-cells";
import { distanceKm } from "../../src/services/profiles/card";

const EARTH_RADIUS_KM = 6371;
const rad = Math.PI / 180;

/** The point `km` away from (lat, lon) on `bearing` degrees, on the sphere the feed measures on. */
function destination(lat: number, lon: number, km: number, bearing: number): [number, number] {
  const d = km / EARTH_RADIUS_KM;
  const φ1 = lat * rad;
  const θ = bearing * rad;
  const φ2 = Math.asin(Math.sin(φ1) * Math.cos(d) + Math.cos(φ1) * Math.sin(d) * Math.cos(θ));
  const λ2 = lon * rad + Math.atan2(Math.sin(θ) * Math.sin(d) * Math.cos(φ1), Math.cos(d) - Math.sin(φ1) * Math.sin(φ2));
  const wrapped = ((((λ2 / rad + 180) % 360) + 360) % 360) - 180;
  return [φ2 / rad, wrapped];
}

/** A small deterministic generator, so a failure names a case that can be replayed. */
function lcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/** Whether the cells the feed reads for a viewer at (lat, lon) with `km` hold `point`. */
function coverage(lat: number, lon: number, km: number): (point: [number, number]) => boolean {
  const selection = cellsCovering(positionBox(lat, lon, km));
  const listed = "cells" in selection ? new Set(selection.cells) : null;
  return (point) => {
    const cell = cellOf(point[0], point[1]);
    return listed ? listed.has(cell) : "band" in selection && cell >= selection.band[0] && cell <= selection.band[1];
  };
}

function covers(lat: number, lon: number, km: number, point: [number, number]): boolean {
  return coverage(lat, lon, km)(point);
}

describe("the cells the discovery feed reads", () => {
  it("hold every point within the distance, anywhere on the globe (2,000 random centres)", () => {
    const random = lcg(20261121);
    for (let i = 0; i < 2000; i++) {
      const lat = random() * 180 - 90;
      const lon = random() * 360 - 180;
      const km = 1 + Math.floor(random() * 500);
      const covered = coverage(lat, lon, km);
      for (let b = 0; b < 360; b += 15) {
        for (const fraction of [1, 0.999, 0.5]) {
          const point = destination(lat, lon, km * fraction, b);
          // The sample really is within reach, as the feed measures it.
          if (distanceKm({ latitude: lat, longitude: lon }, { latitude: point[0], longitude: point[1] }) > km + 1e-6) throw new Error(`${point} is beyond ${km} km`);
          if (!covered(point)) throw new Error(`(${lat}, ${lon}) ${km} km: bearing ${b} at ${fraction} → ${point} not covered`);
        }
      }
    }
  });

  it("cross the antimeridian into the far columns", () => {
    const selection = cellsCovering(positionBox(-17.7, 179.9, 100));
    expect("cells" in selection && selection.cells).toEqual(expect.arrayContaining([cellOf(-17.7, 179.9), cellOf(-17.7, -179.9)]));
    expect(covers(-17.7, 179.9, 100, destination(-17.7, 179.9, 90, 90))).toBe(true);
  });

  it("give the North Pole, latitude 90 and longitude 180 cells of their own", () => {
    expect(cellOf(90, 180)).not.toBe(cellOf(89.5, 179.5));
    expect(cellOf(90, -180)).not.toBe(cellOf(90, 180));
    expect(covers(89.9, 0, 50, [90, 0])).toBe(true);
    expect(covers(89.9, 0, 50, [89.8, 180])).toBe(true);
  });

  it("list a city's few cells, and fall back to whole latitude bands beyond the cap", () => {
    const munich = cellsCovering(positionBox(48.14, 11.58, 80));
    expect("cells" in munich && munich.cells.length).toBeLessThanOrEqual(9);
    // 500 km near a pole spans every longitude: the band, not thousands of cells.
    const arctic = cellsCovering(positionBox(80, 20, 500));
    expect("band" in arctic).toBe(true);
    // 500 km at 65° north: ten bands of about twenty cells, still listed one by one.
    const wide = cellsCovering(positionBox(65, 20, 500));
    expect("cells" in wide && wide.cells.length).toBeGreaterThan(100);
    expect("cells" in wide && wide.cells.length).toBeLessThanOrEqual(MAX_LISTED_CELLS);
  });
});
