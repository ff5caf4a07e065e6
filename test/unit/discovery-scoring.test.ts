import { describe, expect, it } from "vitest";
import { ageOn, agesOn } from "../../src/services/profiles/card";
import { interestOverlap, reciprocalScore, storedInterestOverlap } from "../../src/services/discovery/score";

describe("ages for many birth dates on one day", () => {
  const days = ["2026-02-28T12:00:00Z", "2026-03-01T00:00:00Z", "2028-02-29T23:59:59Z", "2026-12-31T23:00:00Z", "2026-01-01T00:00:00Z"];
  const births = ["2000-02-29", "2000-03-01", "2008-02-28", "2008-02-29", "1990-12-31", "1990-01-01", "2007-12-31", "1958-06-15"];

  // The calendar definition, written out independently of the code under test.
  const reference = (birth: string, now: number) => {
    const [y, m, d] = birth.split("-").map(Number) as [number, number, number];
    const t = new Date(now);
    const birthdayPassed = t.getUTCMonth() + 1 > m || (t.getUTCMonth() + 1 === m && t.getUTCDate() >= d);
    return t.getUTCFullYear() - y - (birthdayPassed ? 0 : 1);
  };

  it("agree with the calendar on birthdays, leap days and year ends, whatever day was asked before", () => {
    const earlier = days.map((day) => agesOn(Date.parse(day)));
    for (const [i, day] of days.entries()) {
      const now = Date.parse(day);
      for (const birth of births) {
        const expected = reference(birth, now);
        expect([day, birth, ageOn(birth, now)]).toEqual([day, birth, expected]);
        expect([day, birth, agesOn(now)(birth)]).toEqual([day, birth, expected]);
        // A function made for another day keeps answering for its own day.
        expect([day, birth, (earlier[i] as (b: string) => number)(birth)]).toEqual([day, birth, expected]);
      }
    }
  });

  it("turns a year older on the birthday itself, not the day before", () => {
    expect(agesOn(Date.parse("2026-05-16T23:59:59Z"))("2000-05-17")).toBe(25);
    expect(agesOn(Date.parse("2026-05-17T00:00:00Z"))("2000-05-17")).toBe(26);
  });
});

describe("interest overlap on stored lists", () => {
  it("equals the general Jaccard overlap when both lists are stored (lower-case, unique)", () => {
    const cases: [string[], string[]][] = [
      [["hiking", "jazz", "chess"], ["jazz", "chess", "cooking", "yoga"]],
      [["hiking"], ["yoga"]],
      [[], ["yoga"]],
      [["a", "b"], ["a", "b"]],
    ];
    for (const [a, b] of cases) expect(storedInterestOverlap(new Set(a), b)).toBeCloseTo(interestOverlap(a, b), 12);
    expect(storedInterestOverlap(new Set(["jazz", "chess"]), ["jazz", "yoga"])).toBeCloseTo(1 / 3, 12);
  });

  it("gives the same score whether the overlap is passed in or computed", () => {
    const side = { age: 30, ageMin: 25, ageMax: 35, maxDistanceKm: 50, interests: ["jazz", "chess"] };
    const other = { age: 28, ageMin: 26, ageMax: 40, maxDistanceKm: 80, interests: ["jazz", "yoga"] };
    const base = { viewer: side, candidate: other, distanceKm: 12, lastActiveMs: 0, createdMs: 0, now: 3_600_000 };
    expect(reciprocalScore({ ...base, overlap: storedInterestOverlap(new Set(side.interests), other.interests) })).toEqual(reciprocalScore(base));
  });
});
