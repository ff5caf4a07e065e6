import { sql } from "drizzle-orm";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { createNeonDatabase } from "../../src/db/neon";
import type { Database, Db } from "../../src/db/port";
import { queryRows } from "../../src/db/rows";
import { startNeonWsProxy, type NeonWsProxy } from "../support/neon-ws-proxy";
import { databaseUrl, serverAddress, withPgClient } from "../support/pg";
import { TEST_PG_ADMIN_URL, randomSuffix } from "../support/services";

const name = `neon_t_${randomSuffix()}`;
const url = databaseUrl(name);

let proxy: NeonWsProxy;
let database: ReturnType<typeof createNeonDatabase>;
let adminClient: pg.Client;

function neonDatabase(target = url) {
  return createNeonDatabase({ url: target, wsProxy: `127.0.0.1:${proxy.port}/v2`, insecure: true, webSocketConstructor: WebSocket });
}

async function scalar<T>(db: Db, query: ReturnType<typeof sql>): Promise<T> {
  const [row] = await queryRows(db, query);
  return Object.values(row ?? {})[0] as T;
}

async function backendsOnTestDatabase(): Promise<number> {
  const r = await adminClient.query<{ n: number }>("select count(*)::int as n from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()", [name]);
  return r.rows[0]?.n ?? -1;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  adminClient = new pg.Client({ connectionString: TEST_PG_ADMIN_URL });
  await adminClient.connect();
  await adminClient.query(`create database "${name}"`);
  await withPgClient(url, (setup) => setup.query("create table counters (id int primary key, n int not null)"));
  proxy = await startNeonWsProxy({ allow: [serverAddress()] });
  database = neonDatabase();
});

afterAll(async () => {
  await database?.close();
  await proxy?.close();
  await adminClient?.query(`drop database if exists "${name}" with (force)`);
  await adminClient?.end();
});

describe("Neon serverless driver through the WebSocket proxy", () => {
  it("runs a plain query on real Postgres", async () => {
    const session = database.session();
    try {
      expect(await queryRows(session.db, sql`select current_database() as db, 41 + 1 as answer`)).toEqual([{ db: name, answer: 42 }]);
    } finally {
      await session.release();
    }
    expect(database.driver).toBe("neon");
  });

  it("serialises concurrent read-modify-write transactions with SELECT … FOR UPDATE", async () => {
    await withPgClient(url, (c) => c.query("insert into counters (id, n) values (1, 0)"));
    const increment = async () => {
      const session = database.session();
      try {
        await session.db.transaction(async (tx) => {
          const n = await scalar<number>(tx as unknown as Db, sql`select n from counters where id = 1 for update`);
          // Widens the window between read and write: without the row lock, both transactions
          // would read the same n and one increment would be lost.
          await sleep(100);
          await tx.execute(sql`update counters set n = ${n + 1} where id = 1`);
        });
      } finally {
        await session.release();
      }
    };
    await Promise.all([increment(), increment(), increment()]);
    const total = await withPgClient(url, (c) => c.query<{ n: number }>("select n from counters where id = 1"));
    expect(total.rows[0]?.n).toBe(3);
  });

  it("holds the row lock until the transaction ends: a second session's NOWAIT fails", async () => {
    await withPgClient(url, (c) => c.query("insert into counters (id, n) values (2, 0)"));
    const holder = database.session();
    const contender = database.session();
    let locked!: () => void;
    const lockTaken = new Promise<void>((resolve) => (locked = resolve));
    let finish!: () => void;
    const mayFinish = new Promise<void>((resolve) => (finish = resolve));
    try {
      const holding = holder.db.transaction(async (tx) => {
        await tx.execute(sql`select n from counters where id = 2 for update`);
        locked();
        await mayFinish;
      });
      await lockTaken;
      const attempt = contender.db.transaction(async (tx) => {
        await tx.execute(sql`select n from counters where id = 2 for update nowait`);
      });
      await expect(attempt).rejects.toMatchObject({ cause: { code: "55P03" } });
      finish();
      await holding;
      // Once the holder commits, the same statement succeeds.
      await contender.db.transaction(async (tx) => {
        await tx.execute(sql`select n from counters where id = 2 for update nowait`);
      });
    } finally {
      finish();
      await Promise.all([holder.release(), contender.release()]);
    }
  });

  it("leaves no change behind when a transaction rolls back", async () => {
    const session = database.session();
    const snapshot = sql`select coalesce(json_agg(c order by id), '[]') as rows from counters c`;
    try {
      const before = await scalar<unknown>(session.db, snapshot);
      const failing = session.db.transaction(async (tx) => {
        await tx.execute(sql`insert into counters (id, n) values (3, 7)`);
        await tx.execute(sql`update counters set n = n + 100`);
        throw new Error("abort on purpose");
      });
      await expect(failing).rejects.toThrow("abort on purpose");
      await expect(
        session.db.transaction(async (tx) => {
          await tx.execute(sql`insert into counters (id, n) values (3, 7)`);
          tx.rollback();
        }),
      ).rejects.toThrow(/rollback/i);
      expect(await scalar<unknown>(session.db, snapshot)).toEqual(before);
      expect(await scalar<number>(session.db, sql`select count(*)::int from counters where id = 3`)).toBe(0);
    } finally {
      await session.release();
    }
  });

  it("release() ends the session's pool and closes its server connections", async () => {
    const session = database.session();
    await Promise.all([session.db.execute(sql`select pg_sleep(0.05)`), session.db.execute(sql`select pg_sleep(0.05)`)]);
    expect(await backendsOnTestDatabase()).toBeGreaterThanOrEqual(2);
    await session.release();
    await expect(session.db.execute(sql`select 1`)).rejects.toMatchObject({ cause: { message: expect.stringMatching(/pool after calling end/) } });
    await expect.poll(backendsOnTestDatabase, { timeout: 5000, interval: 50 }).toBe(0);
    // Releasing twice is harmless: the middleware and error paths may both reach it.
    await expect(session.release()).resolves.toBeUndefined();
  });

  it("close() ends every session that was not released", async () => {
    const own = neonDatabase();
    const a = own.session();
    const b = own.session();
    await Promise.all([a.db.execute(sql`select 1`), b.db.execute(sql`select 1`)]);
    expect(await backendsOnTestDatabase()).toBe(2);
    await own.close();
    await expect(a.db.execute(sql`select 1`)).rejects.toMatchObject({ cause: { message: expect.stringMatching(/pool after calling end/) } });
    await expect.poll(backendsOnTestDatabase, { timeout: 5000, interval: 50 }).toBe(0);
  });
});

describe("Neon WebSocket proxy", () => {
  it("refuses a target outside its allow-list before upgrading", async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${proxy.port}/v2?address=127.0.0.1:22`);
      ws.on("unexpected-response", (_req, res) => {
        resolve(res.statusCode ?? 0);
        ws.terminate();
      });
      ws.on("open", () => reject(new Error("proxy opened a tunnel to a target outside its allow-list")));
      ws.on("error", () => {});
    });
    expect(status).toBe(403);
  });

  it("makes a driver query to a refused target fail instead of connecting", async () => {
    const elsewhere = new URL(url);
    elsewhere.port = "5433";
    const refused = neonDatabase(elsewhere.toString());
    const session = refused.session();
    try {
      // The driver surfaces the WebSocket's error event, which carries the proxy's HTTP status.
      await expect(session.db.execute(sql`select 1`)).rejects.toMatchObject({ cause: { message: expect.stringContaining("403") } });
    } finally {
      await session.release();
      await refused.close();
    }
  });
});
