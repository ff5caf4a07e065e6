import { describe, expect, it } from "vitest";
import type { SupportTicket } from "../../src/services/support/tickets";
import { createMemoryBlobStore } from "../../src/services/kb/blob-store";
import { buildTestApp, fixedClock, type TestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { expectError } from "../support/errors";
import { ENTERPRISE, signIn, type Person } from "../support/people";
import { recordAnswer, type RecordedAnswer } from "../support/support-records";
import { json } from "../support/users";

const NOW = Date.parse("2026-03-02T10:00:00Z");
const H = 3_600_000;
const TICKETS = "/api/v1/admin/support/tickets";
const resolvePath = (id: string) => `${TICKETS}/${id}/resolve`;

type Page = { tickets: SupportTicket[]; nextCursor: string | null };

async function page(t: TestApp, who: Person, query: string): Promise<Page> {
  const res = await t.request(`${TICKETS}?${query}`, { headers: who.headers });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as Page;
}

async function everyPage(t: TestApp, who: Person, query: string): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const p: Page = await page(t, who, `${query}${cursor ? `&cursor=${cursor}` : ""}`);
    ids.push(...p.tickets.map((x) => x.ticketId));
    cursor = p.nextCursor;
    pages++;
  } while (cursor && pages < 20);
  return { ids, pages };
}

async function auditFor(t: TestApp, admin: Person, ticketId: string) {
  const res = await t.request(`/api/v1/admin/audit?action=support_ticket.resolve&targetId=${ticketId}`, { headers: admin.headers });
  expect(res.status).toBe(200);
  return ((await res.json()) as { entries: Record<string, unknown>[] }).entries;
}

/** Each describe has a database of its own, so the tickets of one never show in another's lists. */
async function setup(env: ReturnType<typeof useTestEnvironment>) {
  const clock = fixedClock(NOW);
  const t = buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE, clock });
  const [admin, member] = await Promise.all([signIn(t, env.issuer, { admin: true }), signIn(t, env.issuer)]);
  const write = (a: RecordedAnswer) => recordAnswer(env.db.database.db, t.deps.ids, member.id, a) as Promise<string>;
  return { t, clock, admin, member, write };
}

describe("listing support tickets", () => {
  const env = useTestEnvironment();
  it("pages newest first by (createdAt, id) through the keyset cursor, and filters by status, category and language", async () => {
    const { t, admin, member, write } = await setup(env);
    const rows = [
      { at: NOW - 1 * H, category: "billing", language: "en" },
      { at: NOW - 2 * H, category: "safety", language: "fr" },
      // Two at the same instant: the id breaks the tie, and paging neither skips nor repeats one.
      { at: NOW - 3 * H, category: "billing", language: "fr" },
      { at: NOW - 3 * H, category: "billing", language: "en" },
      { at: NOW - 4 * H, category: "technical", language: "en" },
    ] as const;
    const ids: string[] = [];
    for (const r of rows) ids.push(await write({ ...r, via: "model", reasons: ["asked_for_person"] }));
    // An answer that did not escalate opens no ticket.
    expect(await recordAnswer(env.db.database.db, t.deps.ids, member.id, { at: NOW, category: "billing", language: "en", via: "model" })).toBeNull();
    const created = new Map(ids.map((id, i) => [id, rows[i]!.at]));
    const newestFirst = [...ids].sort((a, b) => created.get(b)! - created.get(a)! || (a < b ? 1 : -1));

    const first = await page(t, admin, "limit=2");
    expect(first.tickets[0]).toEqual({
      ticketId: newestFirst[0],
      answerId: expect.stringMatching(/^sa_/),
      userId: member.id,
      category: "billing",
      language: "en",
      reasons: ["asked_for_person"],
      status: "open",
      createdAt: new Date(NOW - H).toISOString(),
      resolvedAt: null,
      resolvedBy: null,
      resolutionNote: null,
    });
    expect(await everyPage(t, admin, "limit=2")).toEqual({ ids: newestFirst, pages: 3 });
    expect((await page(t, admin, "")).nextCursor).toBeNull();

    const res = await t.request(resolvePath(ids[0]!), { method: "POST", headers: admin.headers });
    expect(res.status).toBe(200);
    expect((await everyPage(t, admin, "status=open&limit=1")).ids).toEqual(newestFirst.filter((id) => id !== ids[0]));
    expect((await page(t, admin, "status=resolved")).tickets.map((x) => x.ticketId)).toEqual([ids[0]]);
    expect((await everyPage(t, admin, "category=billing&limit=1")).ids).toEqual(newestFirst.filter((id) => [ids[0], ids[2], ids[3]].includes(id)));
    expect((await page(t, admin, "language=fr")).tickets.map((x) => x.ticketId)).toEqual([ids[1], ids[2]]);
    expect((await page(t, admin, "category=billing&language=fr&status=open")).tickets.map((x) => x.ticketId)).toEqual([ids[2]]);
    expect((await page(t, admin, "category=account")).tickets).toEqual([]);
  });

  it("refuses bad filters, limits and cursors with 400, and anyone but an admin", async () => {
    const { t, admin, member } = await setup(env);
    for (const q of ["status=closed", "category=dating", "language=xx", "limit=0", "limit=101", "cursor=not-a-cursor"]) {
      const body = await expectError(await t.request(`${TICKETS}?${q}`, { headers: admin.headers }), 400, "invalid_input");
      expect(body.details?.[0]?.path).toBe(q.split("=")[0]);
    }
    await expectError(await t.request(TICKETS, { headers: member.headers }), 403, "forbidden");
    await expectError(await t.request(TICKETS), 401, "unauthorized");
  });
});

describe("resolving a support ticket", () => {
  const env = useTestEnvironment();
  it("resolves once with the note, records who resolved it in the ticket and the audit log; again is 409 and changes nothing", async () => {
    const { t, clock, admin, write } = await setup(env);
    const ticketId = await write({ at: NOW - 2 * H, category: "safety", language: "fr", via: "fallback", reasons: ["self_harm"] });
    clock.set(NOW + 5 * 60_000);
    const res = await t.request(resolvePath(ticketId), json({ note: "  Called back; pointed to local help.  " }, admin.headers));
    expect(res.status, await res.clone().text()).toBe(200);
    const resolved = (await res.json()) as SupportTicket;
    expect(resolved).toMatchObject({
      ticketId,
      status: "resolved",
      resolvedAt: new Date(NOW + 5 * 60_000).toISOString(),
      resolvedBy: admin.id,
      resolutionNote: "Called back; pointed to local help.",
      reasons: ["self_harm"],
    });
    const entries = await auditFor(t, admin, ticketId);
    expect(entries).toEqual([
      expect.objectContaining({
        actorUserId: admin.id,
        credential: "token",
        action: "support_ticket.resolve",
        targetType: "support_ticket",
        targetId: ticketId,
        requestId: res.headers.get("x-request-id"),
        details: { category: "safety", language: "fr", note: "Called back; pointed to local help." },
        createdAt: new Date(NOW + 5 * 60_000).toISOString(),
      }),
    ]);

    clock.set(NOW + 10 * 60_000);
    const again = await expectError(await t.request(resolvePath(ticketId), json({ note: "second" }, admin.headers)), 409, "conflict");
    expect(again.message).toContain(new Date(NOW + 5 * 60_000).toISOString());
    expect((await page(t, admin, "status=resolved&language=fr")).tickets).toEqual([resolved]);
    expect(await auditFor(t, admin, ticketId)).toHaveLength(1);
  });

  it("takes no body or {} for a resolution without a note, and an admin API key (audited as such)", async () => {
    const { t, admin, write } = await setup(env);
    const bare = await write({ at: NOW - H, category: "billing", language: "en", via: "model", reasons: ["nothing_found"] });
    const empty = await write({ at: NOW - H, category: "billing", language: "en", via: "model", reasons: ["nothing_found"] });
    const res = await t.request(resolvePath(bare), { method: "POST", headers: admin.headers });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await res.json()).toMatchObject({ status: "resolved", resolutionNote: null });

    const created = await t.request("/api/v1/admin/api-keys", json({ name: "support desk" }, admin.headers));
    const key = (await created.json()) as { key: string; keyId: string };
    const viaKey = await t.request(resolvePath(empty), json({}, { authorization: `Bearer ${key.key}` }));
    expect(viaKey.status, await viaKey.clone().text()).toBe(200);
    expect(await auditFor(t, admin, empty)).toEqual([expect.objectContaining({ credential: "api_key", apiKeyId: key.keyId, actorUserId: admin.id, details: { category: "billing", language: "en", note: null } })]);
  });

  it("lets exactly one of two concurrent resolutions win, with one audit entry", async () => {
    const { t, admin, write } = await setup(env);
    const other = await signIn(t, env.issuer, { admin: true });
    const ticketId = await write({ at: NOW - H, category: "account", language: "de", via: "model", reasons: ["model"] });
    const answers = await Promise.all([admin, other].map((who, i) => t.request(resolvePath(ticketId), json({ note: `by ${i}` }, who.headers))));
    expect(answers.map((r) => r.status).sort()).toEqual([200, 409]);
    const [entry] = await auditFor(t, admin, ticketId);
    const winner = answers.findIndex((r) => r.status === 200);
    expect(entry).toMatchObject({ actorUserId: [admin, other][winner]!.id, details: { note: `by ${winner}` } });
    expect(await auditFor(t, admin, ticketId)).toHaveLength(1);
  });

  it("answers 404 for an unknown ticket, 400 for a malformed id or note, 403 to a member, 401 without credentials; nothing is written", async () => {
    const { t, admin, member, write } = await setup(env);
    const ticketId = await write({ at: NOW - H, category: "technical", language: "ja", via: "model", reasons: ["asked_for_person"] });
    await expectError(await t.request(resolvePath("tkt_00000000000000000000000000"), { method: "POST", headers: admin.headers }), 404, "not_found");
    const badId = await expectError(await t.request(resolvePath("42"), { method: "POST", headers: admin.headers }), 400, "invalid_input");
    expect(badId.details?.[0]?.path).toBe("ticketId");
    for (const body of [{ note: "" }, { note: "   " }, { note: "x".repeat(2001) }, { note: 5 }, { note: "ok", status: "open" }]) {
      await expectError(await t.request(resolvePath(ticketId), json(body, admin.headers)), 400, "invalid_input");
    }
    await expectError(await t.request(resolvePath(ticketId), { method: "POST", headers: { ...admin.headers, "content-type": "text/plain" }, body: "done" }), 400, "invalid_input");
    await expectError(await t.request(resolvePath(ticketId), json({ note: "mine" }, member.headers)), 403, "forbidden");
    await expectError(await t.request(resolvePath(ticketId), json({ note: "anyone" })), 401, "unauthorized");
    expect((await page(t, admin, "language=ja")).tickets).toEqual([expect.objectContaining({ ticketId, status: "open", resolutionNote: null })]);
    expect(await auditFor(t, admin, ticketId)).toEqual([]);
  });
});

describe("tickets from the support chat", () => {
  const env = useTestEnvironment();
  it("show what the answer record keeps and never the member's words", async () => {
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE, clock: fixedClock(NOW), deps: { blobs: createMemoryBlobStore() } });
    const [admin, member] = await Promise.all([signIn(t, env.issuer, { admin: true }), signIn(t, env.issuer)]);
    const chat = await t.request("/api/v1/ai-agents/support/chat", json({ message: "I want to talk to a person about my Zanzibar trip refund", language: "es" }, member.headers));
    expect(chat.status).toBe(200);
    const { tickets } = await page(t, admin, "");
    expect(tickets).toEqual([expect.objectContaining({ userId: member.id, language: "es", status: "open", reasons: expect.arrayContaining(["asked_for_person"]) })]);
    expect(JSON.stringify(tickets)).not.toMatch(/zanzibar|refund/i);
  });
});
