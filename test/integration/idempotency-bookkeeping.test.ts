import { describe, expect, it } from "vitest";
import { STALE_IN_FLIGHT_MS } from "../../src/services/idempotency/keys";
import { buildTestApp, fixedClock, type TestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { ENTERPRISE, award, signIn, transfer, walletRow, type Person } from "../support/people";
import { withPgClient } from "../support/pg";

// The idempotency layer's own writes (recording an answer, freeing a key after a 5xx) happen after
// the service has answered, on a connection of their own. Here a trigger makes them fail the way a
// terminated Postgres backend does, and the client must still get the answer the service computed.

const env = useTestEnvironment();

/**
 * Makes the next `times` idempotency-key writes of the middleware fail: `terminate` kills the
 * backend, as pg_terminate_backend from outside does; `raise` is an error. `hits()` counts the
 * writes seen. Caught: an UPDATE in a transaction that has written nothing yet (not a service's
 * completion inside its effect's transaction), even one that matches no row (a completion the
 * service made already); a DELETE that removes a key (not the occasional sweep of expired keys,
 * which finds none here).
 */
async function bookkeepingFault(mode: "terminate" | "raise", times: number): Promise<{ hits(): Promise<number>; clear(): Promise<void> }> {
  await withPgClient(env.db.url, async (c) => {
    await c.query(`
      create sequence if not exists bookkeeping_fault_hits;
      create table if not exists bookkeeping_fault (mode text not null, times bigint not null);
      truncate bookkeeping_fault;
      insert into bookkeeping_fault values ('${mode}', ${times});
      create or replace function bookkeeping_fault() returns trigger language plpgsql as $$
      declare f record;
      begin
        if tg_op = 'UPDATE' then
          if pg_current_xact_id_if_assigned() is not null then return null; end if;
        elsif not exists (select 1 from gone) then
          return null;
        end if;
        select * into f from bookkeeping_fault;
        if f is null or nextval('bookkeeping_fault_hits') > f.times then return null; end if;
        if f.mode = 'terminate' then perform pg_terminate_backend(pg_backend_pid()); end if;
        raise exception 'bookkeeping fault';
      end $$;
      create or replace trigger bookkeeping_fault before update on idempotency_keys
        for each statement execute function bookkeeping_fault();
      create or replace trigger bookkeeping_fault_delete after delete on idempotency_keys
        referencing old table as gone for each statement execute function bookkeeping_fault();
      select setval('bookkeeping_fault_hits', 1, false);`);
  });
  return {
    hits: () => withPgClient(env.db.url, async (c) => Number((await c.query<{ n: string }>("select last_value - 1 + is_called::int as n from bookkeeping_fault_hits")).rows[0]?.n)),
    clear: () => withPgClient(env.db.url, async (c) => void (await c.query("drop trigger bookkeeping_fault on idempotency_keys; drop trigger bookkeeping_fault_delete on idempotency_keys"))),
  };
}

/** An always-failing posting for transfers whose note says so: the service's own 5xx. */
async function failingTransfers(): Promise<{ clear(): Promise<void> }> {
  await withPgClient(env.db.url, (c) =>
    c.query(`
      create or replace function explode_on_note() returns trigger language plpgsql as $$
      begin
        if new.note = 'explode' then raise exception 'the ledger is on fire'; end if;
        return new;
      end $$;
      create or replace trigger explode_on_note before insert on ledger_transactions for each row execute function explode_on_note();`),
  );
  return { clear: () => withPgClient(env.db.url, async (c) => void (await c.query("drop trigger explode_on_note on ledger_transactions"))) };
}

async function keyState(userId: string, key: string): Promise<{ status: string; response_status: number | null } | undefined> {
  return withPgClient(env.db.url, async (c) => (await c.query("select status, response_status from idempotency_keys where user_id = $1 and key = $2", [userId, key])).rows[0]);
}

interface World {
  t: TestApp;
  clock: ReturnType<typeof fixedClock>;
  sender: Person;
  recipient: Person;
}

async function world(coins: number): Promise<World> {
  const clock = fixedClock(Date.now());
  const t = buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE, clock });
  const admin = await signIn(t, env.issuer, { admin: true });
  const [sender, recipient] = [await signIn(t, env.issuer), await signIn(t, env.issuer)];
  if (coins > 0) await award(t, admin, sender.id, coins, "seed");
  return { t, clock, sender, recipient };
}

const send = async (w: World, body: Record<string, unknown>, key: string) => {
  const res = await transfer(w.t, w.sender, { toUserId: w.recipient.id, ...body }, { "idempotency-key": key });
  return { status: res.status, replayed: res.headers.get("idempotent-replayed") === "true", body: (await res.json()) as Record<string, unknown> };
};

describe("idempotency bookkeeping that fails after the service answered", () => {
  it("answers a committed transfer as committed, without a second write, when bookkeeping writes would die", async () => {
    const w = await world(100);
    const fault = await bookkeepingFault("terminate", 1_000);
    try {
      const first = await send(w, { amount: 30 }, "done-in-effect");
      expect(first).toEqual({ status: 200, replayed: false, body: { success: true, balance: 70, transferredAmount: 30 } });
      // The transfer completed its key in its own transaction: nothing was left to write after it.
      expect(await fault.hits()).toBe(0);
      expect(await send(w, { amount: 30 }, "done-in-effect")).toEqual({ ...first, replayed: true });
    } finally {
      await fault.clear();
    }
    expect(await walletRow(env.db.database.db, w.sender.id)).toMatchObject({ balance: 70, postings: 2 });
  });

  it("answers a refusal even when recording it first dies with its backend, and records it on a second try", async () => {
    const w = await world(10);
    const fault = await bookkeepingFault("terminate", 1);
    try {
      const refused = await send(w, { amount: 50 }, "refused-once");
      expect(refused).toMatchObject({ status: 422, replayed: false, body: { error: "insufficient_funds", code: 422 } });
      expect(await fault.hits()).toBe(2);
    } finally {
      await fault.clear();
    }
    expect(await keyState(w.sender.id, "refused-once")).toEqual({ status: "done", response_status: 422 });
    const replay = await send(w, { amount: 50 }, "refused-once");
    expect(replay).toMatchObject({ status: 422, replayed: true, body: { error: "insufficient_funds" } });
  });

  it("answers a refusal whose record cannot be written at all, logs it, and lets a retry take the key over after the window", async () => {
    const w = await world(10);
    const fault = await bookkeepingFault("raise", 1_000);
    try {
      expect(await send(w, { amount: 50 }, "refused-unrecorded")).toMatchObject({ status: 422, body: { error: "insufficient_funds" } });
      // Both tries failed: the key stays claimed, which the takeover window covers.
      expect(await send(w, { amount: 50 }, "refused-unrecorded")).toMatchObject({ status: 409, body: { error: "conflict", message: expect.stringContaining("still in progress") } });
    } finally {
      await fault.clear();
    }
    const logged = w.t.logs.filter((l) => l.msg === "idempotency key not recorded");
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ level: "warn", status: 422, attempts: 2 });
    expect(JSON.stringify(logged[0])).not.toContain("refused-unrecorded");
    w.clock.advance(STALE_IN_FLIGHT_MS + 1_000);
    expect(await send(w, { amount: 5 }, "refused-unrecorded")).toMatchObject({ status: 409, body: { message: expect.stringContaining("different request") } });
    expect(await send(w, { amount: 50 }, "refused-unrecorded")).toMatchObject({ status: 422, replayed: false });
    expect(await keyState(w.sender.id, "refused-unrecorded")).toEqual({ status: "done", response_status: 422 });
  });

  it("frees the key of a 5xx even when the first release dies with its backend", async () => {
    const w = await world(100);
    const failing = await failingTransfers();
    const fault = await bookkeepingFault("terminate", 1);
    try {
      const failed = await send(w, { amount: 20, note: "explode" }, "fails-then-works");
      expect(failed).toMatchObject({ status: 500, body: { error: "internal_error", message: "internal error" } });
      expect(Object.keys(failed.body).sort()).toEqual(["code", "error", "message", "requestId"]);
      expect(await fault.hits()).toBe(2);
    } finally {
      await Promise.all([fault.clear(), failing.clear()]);
    }
    expect(await keyState(w.sender.id, "fails-then-works")).toBeUndefined();
    expect(await send(w, { amount: 20, note: "explode" }, "fails-then-works")).toEqual({ status: 200, replayed: false, body: { success: true, balance: 80, transferredAmount: 20 } });
  });

  it("answers a 5xx in its own shape when the key cannot be freed at all, and a retry takes the key over after the window", async () => {
    const w = await world(100);
    const failing = await failingTransfers();
    const fault = await bookkeepingFault("raise", 1_000);
    let failedRequestId: unknown;
    try {
      const failed = await send(w, { amount: 20, note: "explode" }, "stuck-after-5xx");
      expect(failed).toMatchObject({ status: 500, body: { error: "internal_error", message: "internal error" } });
      failedRequestId = failed.body.requestId;
    } finally {
      await Promise.all([fault.clear(), failing.clear()]);
    }
    const logged = w.t.logs.filter((l) => l.msg === "idempotency key not released");
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ level: "warn", requestId: failedRequestId, attempts: 2 });
    // One failure, one error line: the failed release does not become a second error.
    expect(w.t.logs.filter((l) => l.level === "error" && l.requestId === failedRequestId)).toHaveLength(1);
    expect(await send(w, { amount: 20, note: "explode" }, "stuck-after-5xx")).toMatchObject({ status: 409 });
    w.clock.advance(STALE_IN_FLIGHT_MS + 1_000);
    expect(await send(w, { amount: 20, note: "explode" }, "stuck-after-5xx")).toEqual({ status: 200, replayed: false, body: { success: true, balance: 80, transferredAmount: 20 } });
  });
});
