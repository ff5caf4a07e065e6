import { describe, expect, it } from "vitest";
import type { Principal } from "../../src/auth/principal";
import type { Db } from "../../src/db/port";
import { fixedClock } from "../../src/platform/clock";
import { createIdGenerator, webRandom } from "../../src/platform/ids";
import { replaceKb } from "../../src/services/kb/document";
import { createKbCache, KB_CACHE_MS } from "../../src/services/kb/snapshot";
import { ensureUser } from "../../src/services/users/ensure-user";
import { useTestDatabase } from "../support/environment";
import { randomSuffix } from "../support/services";

const env = useTestDatabase();

/**
 * The real database, through a handle whose queries run at once but whose answers after the
 * first `pass` are held until `open()`: a reader that has read and not yet published.
 */
function holdingAnswers(db: Db, pass: number): { db: Db; held: Promise<void>; open: () => void } {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  let markHeld!: () => void;
  const held = new Promise<void>((resolve) => (markHeld = resolve));
  let calls = 0;
  let waiting = 0;
  const slow = new Proxy(db, {
    get(target, key, receiver) {
      if (key !== "execute") return Reflect.get(target, key, receiver);
      return async (...args: unknown[]) => {
        const mine = calls++;
        const answer = await (target.execute as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        if (mine < pass) return answer;
        if (++waiting === 2) markHeld();
        await gate;
        return answer;
      };
    },
  });
  return { db: slow, held, open };
}

describe("the KB cache of one instance", () => {
  it("keeps its own write when a reload that read older data finishes after it", async () => {
    const db = env.db.database.db;
    const user = await ensureUser(db, { subject: `kb-race-${randomSuffix()}`, email: null, role: "admin", issuedAt: new Date(), newId: `usr_kbrace${randomSuffix()}`, now: new Date() });
    const admin: Principal = { userId: user.id, email: null, role: "admin", credential: "token" };
    const clock = fixedClock(Date.now());
    const cache = createKbCache(clock);
    const audit = { ids: createIdGenerator(clock, webRandom), requestId: "req_kbrace" };
    await replaceKb({ db, cache, ...audit }, admin, "# One\n\nversion one");
    await cache.get(db);
    // Another instance writes; this one notices once its cache time is up.
    await replaceKb({ db, cache: createKbCache(clock), ...audit }, admin, "# Two\n\nversion two");
    clock.advance(KB_CACHE_MS + 1);

    // A reader's reload reads version two (the stamp query, then the two loads) and is slow to publish...
    const slow = holdingAnswers(db, 1);
    const late = cache.get(slow.db);
    await slow.held;
    // ...while this instance writes version three and the next reader reloads it.
    const three = await replaceKb({ db, cache, ...audit }, admin, "# Three\n\nversion three");
    expect((await cache.get(db)).document.version).toBe(three.version);
    slow.open();
    expect((await late).document.content).toContain("version two");
    // The late reload answered its own reader but did not replace the newer document.
    expect((await cache.get(db)).document.version).toBe(three.version);
    clock.advance(KB_CACHE_MS - 1);
    expect((await cache.get(db)).document.content).toContain("version three");
  });
});
