import { describe, expect, it } from "vitest";
import { createMemoryStore } from "../../src/kv/memory";
import { fixedClock } from "../../src/platform/clock";
import { buildTestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { ENTERPRISE, award, signIn } from "../support/people";

// A database of its own: this test needs to know exactly who holds the top of the board.
const env = useTestEnvironment();

interface Board {
  entries: { rank: number; userId: string; coins: number }[];
  nextOffset: number | null;
}

describe("leaderboard paging", () => {
  it("serves the pages of the top from one ranking: a member who moves while someone pages is neither repeated nor skipped", async () => {
    const clock = fixedClock(Date.now());
    // The in-process store: the cached ranking's lifetime must run on the test's fake clock, as Redis's TTLs cannot.
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE, clock, kv: createMemoryStore({ clock }) });
    const admin = await signIn(t, env.issuer, { admin: true });
    const people = [];
    for (let i = 0; i < 4; i++) people.push(await signIn(t, env.issuer));
    for (const [i, p] of people.entries()) await award(t, admin, p.id, 400 - i * 100);
    const read = async (query: string): Promise<Board> => (await (await t.request(`/api/v1/wallet/leaderboard${query}`, { headers: admin.headers })).json()) as Board;
    const ids = (board: Board) => board.entries.map((e) => e.userId);

    const first = await read("?limit=2");
    expect(ids(first)).toEqual([people[0]!.id, people[1]!.id]);
    // The last of the four becomes the richest between the two pages.
    await award(t, admin, people[3]!.id, 1_000);
    const second = await read("?limit=2&offset=2");
    expect(second.entries.map((e) => [e.rank, e.userId])).toEqual([
      [3, people[2]!.id],
      [4, people[3]!.id],
    ]);
    expect(second.nextOffset).toBeNull();
    // Another page size within the same half minute agrees with it.
    expect(ids(await read("?limit=3&offset=1"))).toEqual([people[1]!.id, people[2]!.id, people[3]!.id]);
    // The next ranking shows the move.
    clock.advance(30_000);
    expect((await read("?limit=1")).entries.map((e) => [e.rank, e.userId, e.coins])).toEqual([[1, people[3]!.id, 1_100]]);
  });
});
