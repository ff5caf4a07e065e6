import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import type { Principal } from "../../src/auth/principal";
import { queryRows } from "../../src/db/rows";
import type { KeyValueStore } from "../../src/kv/port";
import { KEEP_ROWS_MS, MAX_ATTEMPTS, pruneAccountExports, RETRY_AFTER_MS, runAccountExports, type ExportRunnerDeps } from "../../src/services/account/export-runner";
import { DOWNLOAD_WINDOW_MS, requestExport } from "../../src/services/account/exports";
import { buildTestApp, fixedClock, type TestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { ENTERPRISE, signIn } from "../support/people";

const env = useTestEnvironment();
const clock = fixedClock(Date.parse("2026-11-20T12:00:00.000Z"));
let t: TestApp;

beforeAll(() => {
  t = buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE, clock });
});

const db = () => env.db.database.session().db;
const member = (userId: string): Principal => ({ userId, email: null, role: "user", credential: "token" });
/** Queued through the service, not the route, so no build starts before the test runs one. */
const queue = (userId: string) => requestExport({ db: db(), ids: t.deps.ids, random: t.deps.random, now: clock.now() }, member(userId));
const runner = (over: Partial<ExportRunnerDeps> = {}): ExportRunnerDeps => ({ db: db(), kv: t.deps.kv, clock, logger: t.deps.logger, ...over });
const row = async (id: string) =>
  (await queryRows<{ status: string; attempts: number; document: string | null; last_error: string | null }>(db(), sql`select status, attempts, document, last_error from account_exports where id = ${id}`))[0]!;

describe("building an export", () => {
  it("reads 20,000 swipes in keyset pages of at most the page size, and writes every one", async () => {
    const swiper = await signIn(t, env.issuer);
    const SWIPES = 20_000;
    await db().execute(sql`insert into users (id, subject) select 'usr_paged_' || lpad(g::text, 6, '0'), 'paged-' || g from generate_series(1, ${SWIPES}) g`);
    await db().execute(sql`insert into swipes (swiper_id, target_id, action, created_at)
      select ${swiper.id}, 'usr_paged_' || lpad(g::text, 6, '0'), case when g % 3 = 0 then 'pass' else 'like' end, now() from generate_series(1, ${SWIPES}) g`);
    const { exportId } = await queue(swiper.id);
    const pages: number[] = [];
    const built = await runAccountExports(runner({ pageSize: 1000, onPage: (section, rows) => section === "swipes" && pages.push(rows) }));
    expect(built).toBe(1);
    // Twenty full pages, then the empty one that ends the walk.
    expect(pages).toEqual([...Array<number>(20).fill(1000), 0]);
    const stored = await row(exportId);
    expect(stored.status).toBe("ready");
    const swipes = (JSON.parse(stored.document!) as { swipes: { targetUserId: string; action: string }[] }).swipes;
    expect(swipes).toHaveLength(SWIPES);
    expect(new Set(swipes.map((s) => s.targetUserId)).size).toBe(SWIPES);
    expect(swipes[0]).toMatchObject({ targetUserId: "usr_paged_000001", action: "like" });
    expect(swipes[SWIPES - 1]).toMatchObject({ targetUserId: "usr_paged_020000", action: "like" });
    expect(swipes.filter((s) => s.action === "pass")).toHaveLength(Math.floor(SWIPES / 3));
  });

  it("takes up an export whose builder died once its lease has run out", async () => {
    const person = await signIn(t, env.issuer);
    const { exportId } = await queue(person.id);
    // A builder claimed it and vanished: running, lease still ahead.
    await db().execute(sql`update account_exports set status = 'running', attempts = 1, lease_until = ${new Date(clock.now() + 60_000).toISOString()}::timestamptz where id = ${exportId}`);
    expect(await runAccountExports(runner())).toBe(0);
    clock.advance(60_001);
    expect(await runAccountExports(runner())).toBe(1);
    expect(await row(exportId)).toMatchObject({ status: "ready", attempts: 2 });
  });

  it("retries a failing build, then marks it failed after the last attempt", async () => {
    const person = await signIn(t, env.issuer);
    const { exportId } = await queue(person.id);
    // The store that holds the AI context cannot answer: the export must not claim there is none.
    const down: KeyValueStore = { ...t.deps.kv, get: () => Promise.reject(new Error("store unreachable")) };
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      expect(await runAccountExports(runner({ kv: down }))).toBe(0);
      expect(await row(exportId)).toMatchObject({ status: attempt < MAX_ATTEMPTS ? "pending" : "failed", attempts: attempt, last_error: "store unreachable" });
      // Not retried before its time.
      expect(await runAccountExports(runner({ kv: down }))).toBe(0);
      expect((await row(exportId)).attempts).toBe(attempt);
      clock.advance(RETRY_AFTER_MS + 1);
    }
    const res = await t.request(`/api/v1/account/exports/${exportId}`, { headers: person.headers });
    expect(await res.json()).toMatchObject({ status: "failed", download: null });
  });

  it("upkeep drops documents past their window, then the rows after 30 days", async () => {
    const person = await signIn(t, env.issuer);
    const { exportId } = await queue(person.id);
    expect(await runAccountExports(runner())).toBe(1);
    const log = { info: () => {} };
    await pruneAccountExports(db(), clock.now() + DOWNLOAD_WINDOW_MS - 1, log);
    expect((await row(exportId)).status).toBe("ready");
    await pruneAccountExports(db(), clock.now() + DOWNLOAD_WINDOW_MS, log);
    expect(await row(exportId)).toMatchObject({ status: "expired", document: null });
    await pruneAccountExports(db(), clock.now() + KEEP_ROWS_MS + 1, log);
    expect(await queryRows(db(), sql`select id from account_exports where id = ${exportId}`)).toEqual([]);
  });
});
