import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { queryRows } from "../../src/db/rows";
import { LANGUAGE_CODES } from "../../src/services/ai/languages";
import { TRANSLATED_LANGUAGES, statusMessage } from "../../src/services/support-video/messages";
import { buildTestApp, fixedClock, type TestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { ENTERPRISE, signIn, type Person } from "../support/people";
import { json } from "../support/users";

const PATH = "/api/v1/ai-agents/support-video/request";
const NOW = Date.parse("2026-03-02T10:00:00Z");

interface Queued {
  requestId: string;
  userId: string;
  status: string;
  priority: string;
  queuePosition: number;
  estimatedWaitMinutes: number;
  statusMessage: string;
  statusMessageLanguage: string;
  language: string;
  callbackTimes: { from: string; to: string }[];
  timezone: string;
  createdAt: string;
}

interface AiError {
  success: false;
  error: { code: string; message: string; details: string; language: string };
  timestamp: string;
}

function app(env: { db: { database: TestApp["deps"]["database"] }; issuer: Parameters<typeof buildTestApp>[0]["issuer"] }, extra: Record<string, string> = {}): TestApp {
  // No INFERENCE_URL: the queue answers without any model.
  return buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE, clock: fixedClock(NOW), env: { SUPPORT_VIDEO_HANDLING_MINUTES: "10", ...extra } });
}

const body = (extra: Record<string, unknown> = {}) => ({ reason: "I cannot verify my photos", platform: "ios", ...extra });

async function queue(t: TestApp, who: Person, extra: Record<string, unknown> = {}): Promise<Queued> {
  const res = await t.request(PATH, json(body(extra), who.headers));
  const text = await res.text();
  expect(res.status, text).toBe(201);
  const parsed = JSON.parse(text) as { success: boolean; data: Queued; timestamp: string };
  expect(parsed.success).toBe(true);
  expect(parsed.timestamp).toBe(new Date(NOW).toISOString());
  return parsed.data;
}

async function aiError(res: Response, status: number, code: string): Promise<AiError> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  const parsed = JSON.parse(text) as AiError;
  expect(parsed).toMatchObject({ success: false, error: { code } });
  expect(typeof parsed.error.details).toBe("string");
  return parsed;
}

describe("queue position and wait", () => {
  const env = useTestEnvironment();

  it("answers id, position, wait and a status message in the user's language, and stores the request", async () => {
    const t = app(env);
    const me = await signIn(t, env.issuer);
    const windows = [{ from: "2026-03-02T15:00:00+01:00", to: "2026-03-02T17:00:00+01:00" }];
    const q = await queue(t, me, { language: "fr", priority: "low", platform: "android", callbackTimes: windows, timezone: "Europe/Paris" });
    expect(q).toMatchObject({
      userId: me.id,
      status: "waiting",
      priority: "low",
      queuePosition: 1,
      estimatedWaitMinutes: 10,
      statusMessageLanguage: "fr",
      language: "fr",
      callbackTimes: windows,
      timezone: "Europe/Paris",
      createdAt: new Date(NOW).toISOString(),
    });
    expect(q.requestId).toMatch(/^svr_/);
    expect(q.statusMessage).toBe("Votre demande d'assistance vidéo est dans la file d'attente. Position : 1. Attente estimée : environ 10 min.");
    const [row] = await queryRows<Record<string, unknown>>(t.deps.database.session().db, sql`select * from support_video_requests where id = ${q.requestId}`);
    expect(row).toMatchObject({ user_id: me.id, reason: "I cannot verify my photos", priority: "low", platform: "android", language: "fr", timezone: "Europe/Paris", status: "waiting", filed_by: null });
    expect(row!.callback_times).toEqual(windows);
  });
});

describe("queue order", () => {
  const env = useTestEnvironment();

  it("counts the waiting requests ahead: higher priority first, then arrival", async () => {
    const t = app(env);
    const people = await Promise.all(Array.from({ length: 5 }, () => signIn(t, env.issuer)));
    const [a, b, c, d, e] = people as [Person, Person, Person, Person, Person];
    const staff = await signIn(t, env.issuer, { admin: true });
    expect((await queue(t, a, { priority: "normal" })).queuePosition).toBe(1);
    expect((await queue(t, b, { priority: "normal" })).queuePosition).toBe(2);
    expect((await queue(t, staff, { userId: c.id, priority: "high" })).queuePosition).toBe(1);
    const low = await queue(t, d, { priority: "low" });
    expect(low).toMatchObject({ queuePosition: 4, estimatedWaitMinutes: 40 });
    expect((await queue(t, e)).queuePosition).toBe(4);
  });
});

describe("concurrent requests", () => {
  const env = useTestEnvironment();

  it("get distinct positions that follow the order they were queued in", async () => {
    const t = app(env);
    const people = await Promise.all(Array.from({ length: 20 }, () => signIn(t, env.issuer)));
    const answers = await Promise.all(people.map((p) => queue(t, p)));
    const positions = answers.map((a) => a.queuePosition).sort((x, y) => x - y);
    expect(positions).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    const rows = await queryRows<{ id: string }>(t.deps.database.session().db, sql`select id from support_video_requests order by seq`);
    const byPosition = [...answers].sort((x, y) => x.queuePosition - y.queuePosition).map((a) => a.requestId);
    expect(rows.map((r) => r.id)).toEqual(byPosition);
  });
});

describe("status message language", () => {
  const env = useTestEnvironment();

  it("falls back to English for a supported language without a translation, and says so", async () => {
    const t = app(env);
    const untranslated = LANGUAGE_CODES.find((l) => !TRANSLATED_LANGUAGES.includes(l))!;
    const q = await queue(t, await signIn(t, env.issuer), { language: untranslated });
    expect(q).toMatchObject({ language: untranslated, statusMessageLanguage: "en" });
    expect(q.statusMessage).toMatch(/^Your video support request is in the queue\. Position: \d+\./);
  });

  it("has a message with the position and wait in every translated language", () => {
    expect(TRANSLATED_LANGUAGES).toEqual(expect.arrayContaining(["en", "es", "fr", "sw", "ar", "zh", "hi", "pt", "ru", "ja", "ko", "de", "it"]));
    for (const language of TRANSLATED_LANGUAGES) {
      const m = statusMessage(language, 37, 555);
      expect(m.language).toBe(language);
      expect(m.text, language).toContain("37");
      expect(m.text, language).toContain("555");
      if (language !== "en") expect(m.text).not.toBe(statusMessage("en", 37, 555).text);
    }
  });
});

describe("validation and permissions", () => {
  const env = useTestEnvironment();

  it("answers shape-2 errors in the request's language", async () => {
    const t = app(env);
    const me = await signIn(t, env.issuer);
    const noReason = await aiError(await t.request(PATH, json({ platform: "ios", language: "es" }, me.headers)), 400, "invalid_input");
    expect(noReason.error.language).toBe("es");
    expect(noReason.error.details).toContain("reason");
    await aiError(await t.request(PATH, json(body({ language: "xx" }), me.headers)), 400, "invalid_language");
    await aiError(await t.request(PATH, json(body({ timezone: "Mars/Olympus" }), me.headers)), 400, "invalid_input");
    await aiError(await t.request(PATH, json(body({ platform: "fax" }), me.headers)), 400, "invalid_input");
    await aiError(await t.request(PATH, json(body({ reason: "help" }), me.headers)), 400, "invalid_input");
    await aiError(await t.request(PATH, json(body({ surprise: true }), me.headers)), 400, "invalid_input");
    const past = await aiError(
      await t.request(PATH, json(body({ callbackTimes: [{ from: "2026-03-01T10:00:00Z", to: "2026-03-01T11:00:00Z" }] }), me.headers)),
      400,
      "invalid_input",
    );
    expect(past.error.details).toContain("callbackTimes.0.to");
    const backwards = await aiError(
      await t.request(PATH, json(body({ callbackTimes: [{ from: "2026-03-03T11:00:00Z", to: "2026-03-03T10:00:00Z" }] }), me.headers)),
      400,
      "invalid_input",
    );
    expect(backwards.error.details).toContain("to must be after from");
    await aiError(await t.request(PATH, json(body({ callbackTimes: [{ from: "2026-05-03T10:00:00Z", to: "2026-05-03T11:00:00Z" }] }), me.headers)), 400, "invalid_input");
    await aiError(await t.request(PATH, { method: "POST", headers: { ...me.headers, "content-type": "application/json" }, body: "{not json" }), 400, "invalid_input");
    const rows = await queryRows<{ n: string }>(t.deps.database.session().db, sql`select count(*)::text as n from support_video_requests where user_id = ${me.id}`);
    expect(rows[0]!.n).toBe("0");
  });

  it("refuses a request for someone else, and 'high' or 'urgent' from a member (staff set those)", async () => {
    const t = app(env);
    const [me, other] = [await signIn(t, env.issuer), await signIn(t, env.issuer)];
    await aiError(await t.request(PATH, json(body({ userId: other.id }), me.headers)), 403, "forbidden");
    for (const priority of ["high", "urgent"]) {
      const raised = await aiError(await t.request(PATH, json(body({ priority }), me.headers)), 400, "invalid_input");
      expect(raised.error.details).toContain("priority");
    }
    const rows = await queryRows<{ n: string }>(t.deps.database.session().db, sql`select count(*)::text as n from support_video_requests where user_id in (${me.id}, ${other.id})`);
    expect(rows[0]!.n).toBe("0");
  });

  it("lets support staff file an urgent request for a member, but not for an unknown user", async () => {
    const t = app(env);
    const [staff, member] = [await signIn(t, env.issuer, { admin: true }), await signIn(t, env.issuer)];
    const q = await queue(t, staff, { userId: member.id, priority: "urgent" });
    expect(q).toMatchObject({ userId: member.id, priority: "urgent", queuePosition: 1 });
    const [row] = await queryRows<{ filed_by: string }>(t.deps.database.session().db, sql`select filed_by from support_video_requests where id = ${q.requestId}`);
    expect(row!.filed_by).toBe(staff.id);
    await aiError(await t.request(PATH, json(body({ userId: "usr_nobody" }), staff.headers)), 404, "not_found");
  });

  it("keeps one waiting request per person: a second answers 409 naming the first", async () => {
    const t = app(env);
    const me = await signIn(t, env.issuer);
    const first = await queue(t, me);
    const again = await aiError(await t.request(PATH, json(body(), me.headers)), 409, "conflict");
    expect(again.error.details).toContain(first.requestId);
    const racer = await signIn(t, env.issuer);
    const statuses = await Promise.all([1, 2].map(async () => (await t.request(PATH, json(body(), racer.headers))).status));
    expect(statuses.sort()).toEqual([201, 409]);
  });
});
