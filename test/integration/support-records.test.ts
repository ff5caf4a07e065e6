import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { supportAnswers, supportTickets } from "../../src/db/tables/support";
import { createMemoryBlobStore } from "../../src/services/kb/blob-store";
import { buildTestApp, fixedClock } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { ENTERPRISE, signIn } from "../support/people";
import { json } from "../support/users";

const env = useTestEnvironment();

describe("support answers are recorded as they are given", () => {
  it("records category, language, via, escalation and its reasons, without any text, and opens a ticket for an escalation", async () => {
    const clock = fixedClock(Date.parse("2026-11-27T10:00:00Z"));
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE, clock, deps: { blobs: createMemoryBlobStore() } });
    const user = await signIn(t, env.issuer);
    const res = await t.request("/api/v1/ai-agents/support/chat", json({ message: "I want to talk to a person about the capital of France", language: "fr" }, user.headers));
    expect(res.status).toBe(200);
    const body = (await res.json()) as { escalate: boolean; category: string };
    expect(body.escalate).toBe(true);

    const db = env.db.database.db;
    const tickets = await db.select().from(supportTickets);
    expect(tickets).toHaveLength(1);
    expect(tickets[0]).toMatchObject({ status: "open", language: "fr", category: body.category, resolvedAt: null, createdAt: new Date("2026-11-27T10:00:00Z") });
    expect(tickets[0]?.reasons).toEqual(expect.arrayContaining(["asked_for_person"]));
    const [answer] = await db.select().from(supportAnswers).where(eq(supportAnswers.id, tickets[0]!.answerId));
    expect(answer).toMatchObject({ via: "fallback", escalated: true, language: "fr", category: body.category });
    expect(JSON.stringify(answer)).not.toContain("France");
  });
});
