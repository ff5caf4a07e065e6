import { sql } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createBackgroundWork } from "../../src/platform/background";
import { fixedClock } from "../../src/platform/clock";
import { inferenceFromConfig } from "../../src/services/inference/from-config";
import { sourceHash } from "../../src/services/translations/bundles";
import { RETRY_AFTER_MS, runTranslationJobs, type SeedingDeps } from "../../src/services/translations/seeding";
import { buildTestApp, type TestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { startFakeInference, type FakeInference } from "../support/fake-inference";
import { ENTERPRISE, signIn, type Person } from "../support/people";
import { askedKeys, translator } from "../support/translator";
import { json } from "../support/users";

const env = useTestEnvironment();
let host: FakeInference;
let t: TestApp;
let admin: Person;
let member: Person;
// Frozen, so a waiting job's retry time is reached by moving it, not by sleeping.
const clock = fixedClock(Date.now());

beforeAll(async () => {
  host = await startFakeInference();
  t = buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE, clock, env: { INFERENCE_URL: host.url, INFERENCE_MODEL: "wanted-model", INFERENCE_TIMEOUT_MS: "2000" } });
  [admin, member] = await Promise.all([signIn(t, env.issuer, { admin: true }), signIn(t, env.issuer)]);
});
afterAll(() => host.close());
beforeEach(() => {
  host.reset();
  host.respond(translator());
});

interface Job {
  jobId: string;
  status: string;
  lastError: string | null;
  languages: { language: string; status: string; total: number; translated: number; untranslated: { key: string; reason: string }[] }[];
}

const seed = (who: Person, ns: string, body: unknown) => t.request(`/api/v1/translations/${ns}/seed`, json(body, who.headers));
const job = async (who: Person, id: string) => (await (await t.request(`/api/v1/translations/jobs/${id}`, { headers: who.headers })).json()) as Job;
const bundle = (ns: string, lang: string) => t.request(`/api/v1/translations/${ns}?lang=${lang}`);

/** Polls the job route until the job is in `status`, or fails after the deadline. */
async function until(id: string, status: string, deadlineMs = 15_000): Promise<Job> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const j = await job(admin, id);
    if (j.status === status) return j;
    if (Date.now() > end) throw new Error(`job ${id} is ${j.status}, not ${status}: ${JSON.stringify(j)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function started(res: Response): Promise<Job> {
  const text = await res.text();
  expect(res.status, text).toBe(202);
  const body = JSON.parse(text) as Job;
  expect(res.headers.get("location")).toBe(`/api/v1/translations/jobs/${body.jobId}`);
  return body;
}

const runnerDeps = (signal?: AbortSignal): SeedingDeps => ({
  db: env.db.database.session().db,
  inference: inferenceFromConfig(t.deps.config, t.deps),
  random: t.deps.random,
  clock,
  logger: t.deps.logger,
  signal,
});

describe("POST /api/v1/translations/{namespace}/seed and GET /api/v1/translations/jobs/{jobId}", () => {
  it("translates a namespace in the background, in batches whose JSON schema is exactly the batch's keys", async () => {
    const seeded = await seed(admin, "errors", { targetLanguages: ["fr"] });
    const requestId = seeded.headers.get("x-request-id");
    const queued = await started(seeded);
    expect(queued).toMatchObject({ status: "queued", languages: [{ language: "fr", status: "pending" }] });
    const audit = await t.request(`/api/v1/admin/audit?action=translations.seed&targetId=${queued.jobId}`, { headers: admin.headers });
    expect(((await audit.json()) as { entries: unknown[] }).entries).toEqual([
      expect.objectContaining({ targetType: "translation_job", requestId, details: { namespace: "errors", targetLanguages: ["fr"], overwrite: false } }),
    ]);
    const done = await until(queued.jobId, "done");
    const total = done.languages[0]!.total;
    expect(done.languages).toEqual([{ language: "fr", status: "done", total, translated: total, untranslated: [] }]);

    const calls = host.chats();
    expect(calls.length).toBe(Math.ceil(total / 20));
    for (const call of calls) {
      expect(call.schema).toMatchObject({ type: "object", additionalProperties: false });
      expect(((call.schema!.required as string[]) ?? []).sort()).toEqual(askedKeys(call));
    }
    expect(calls.flatMap(askedKeys).length).toBe(total);

    const res = await bundle("errors", "fr");
    const body = (await res.json()) as { rate_limit_exceeded: string; fields: { tooShort: string } };
    expect(res.headers.get("content-language")).toBe("fr");
    expect(body.rate_limit_exceeded).toBe("«fr» You are going a bit fast. Try again in {{seconds}} seconds.");
    expect(body.fields.tooShort).toContain("{{field}}");
  });

  it("asks a key again once when the model drops a placeholder, and reports a key that stays broken, leaving it English", async () => {
    let askedTwice = 0;
    host.respond(
      translator((key, text, call) => {
        const again = call.messages[1]!.content.includes("lost placeholders");
        if (key === "rate_limit_exceeded" && !again) return text.replace("{{seconds}}", "a few");
        if (key === "rate_limit_exceeded") askedTwice++;
        if (key === "internal_error") return text.replace(" {{requestId}}", "");
        return text;
      }),
    );
    const done = await until((await started(await seed(admin, "errors", { targetLanguages: ["de"] }))).jobId, "done");
    expect(askedTwice).toBe(1);
    expect(done.languages[0]!.untranslated).toEqual([{ key: "internal_error", reason: "missing {{requestId}}" }]);
    expect(done.languages[0]!.translated).toBe(done.languages[0]!.total - 1);
    // The re-ask carries only the bad keys.
    const retries = host.chats().filter((c) => c.messages[1]!.content.includes("lost placeholders"));
    expect(retries.map(askedKeys)).toEqual([["internal_error", "rate_limit_exceeded"]]);

    const res = await bundle("errors", "de");
    const body = (await res.json()) as Record<string, string>;
    expect(body.rate_limit_exceeded).toContain("{{seconds}}");
    expect(body.internal_error).toBe("Something went wrong on our side. If it keeps happening, contact support with code {{requestId}}.");
    expect(res.headers.get("content-language")).toBe("de, en");
  });

  it("asks for each language's own CLDR plural categories: Arabic six, Russian four, Japanese one", async () => {
    const done = await until((await started(await seed(admin, "wallet", { targetLanguages: ["ar", "ru", "ja"] }))).jobId, "done");
    expect(done.languages.map((l) => [l.language, l.status, l.untranslated.length])).toEqual([
      ["ar", "done", 0],
      ["ru", "done", 0],
      ["ja", "done", 0],
    ]);
    const asked = (code: string) =>
      host
        .chats()
        .filter((c) => c.messages[0]!.content.includes(`language code "${code}"`))
        .flatMap(askedKeys)
        .filter((k) => k.startsWith("balance.coins_"))
        .sort();
    expect(asked("ar")).toEqual(["zero", "one", "two", "few", "many", "other"].map((c) => `balance.coins_${c}`).sort());
    expect(asked("ru")).toEqual(["one", "few", "many", "other"].map((c) => `balance.coins_${c}`).sort());
    expect(asked("ja")).toEqual(["balance.coins_other"]);
    const ja = (await (await bundle("wallet", "ja")).json()) as { balance: Record<string, string> };
    expect(Object.keys(ja.balance).filter((k) => k.startsWith("coins_"))).toEqual(["coins_other"]);
  });

  it("re-running translates only missing keys and keys whose English changed", async () => {
    await until((await started(await seed(admin, "matching", { targetLanguages: ["sw"] }))).jobId, "done");
    host.reset();
    host.respond(translator());
    const again = await until((await started(await seed(admin, "matching", { targetLanguages: ["sw"] }))).jobId, "done");
    expect(host.chats()).toEqual([]);
    expect(again.languages[0]!.translated).toBe(again.languages[0]!.total);

    const db = env.db.database.session().db;
    const changed = "You and {{name}} both said yes.";
    await db.execute(sql`update translation_strings set value = ${changed}, source_hash = ${await sourceHash(changed)} where namespace = 'matching' and language = 'en' and key = 'match.body'`);
    await db.execute(sql`delete from translation_strings where namespace = 'matching' and language = 'sw' and key = 'safety.report'`);
    await until((await started(await seed(admin, "matching", { targetLanguages: ["sw"] }))).jobId, "done");
    expect(host.chats().flatMap(askedKeys)).toEqual(["match.body", "safety.report"]);
    expect(((await (await bundle("matching", "sw")).json()) as { match: { body: string } }).match.body).toBe(`«sw» ${changed}`);

    // overwrite: every key again (written before the job began, on this frozen clock a moment ago).
    clock.advance(1);
    host.reset();
    host.respond(translator());
    const all = await until((await started(await seed(admin, "matching", { targetLanguages: ["sw"], overwrite: true }))).jobId, "done");
    expect(host.chats().flatMap(askedKeys).length).toBe(all.languages[0]!.total);
  });

  it("waits when the inference hosts go down mid-job and goes on from where it stopped once they answer", async () => {
    let calls = 0;
    host.respond((call) => {
      if (++calls === 1) host.setMode("down");
      return translator()(call);
    });
    const id = (await started(await seed(admin, "onboarding", { targetLanguages: ["pl"] }))).jobId;
    const waiting = await until(id, "waiting");
    expect(waiting.lastError).toMatch(/inference hosts could not be reached/);
    expect(waiting.languages[0]).toMatchObject({ status: "running", translated: 20 });
    const firstBatch = askedKeys(host.chats()[0]!);

    // Not before its retry time, then on.
    host.setMode("ok");
    host.reset();
    host.respond(translator());
    expect(await runTranslationJobs(runnerDeps())).toBe(0);
    expect(host.chats()).toEqual([]);
    clock.advance(RETRY_AFTER_MS + 1);
    expect(await runTranslationJobs(runnerDeps())).toBe(1);
    const done = await job(admin, id);
    expect(done).toMatchObject({ status: "done", lastError: null });
    expect(done.languages[0]!.translated).toBe(done.languages[0]!.total);
    const resumed = host.chats().flatMap(askedKeys);
    expect(resumed.length).toBe(done.languages[0]!.total - 20);
    expect(resumed.filter((k) => firstBatch.includes(k))).toEqual([]);
  });

  it("a stopping process hands its job back between batches, and waits for that before it closes", async () => {
    host.setMode("slow", { delayMs: 10_000 });
    // Queued directly, so that only the runner below holds it.
    const db = env.db.database.session().db;
    const id = `trj_${"0".repeat(25)}1`;
    await db.execute(sql`insert into translation_jobs (id, namespace, overwrite, status, progress, requested_by, created_at, updated_at)
      values (${id}, 'common', false, 'queued', ${JSON.stringify([{ language: "hi", status: "pending", total: 0, translated: 0, untranslated: [] }])}::jsonb, ${admin.id}, now(), now())`);
    const stopping = new AbortController();
    const background = createBackgroundWork();
    let ran = false;
    background.track(runTranslationJobs(runnerDeps(stopping.signal)).then(() => (ran = true)));
    const end = Date.now() + 10_000;
    while (host.chats().length === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    expect(host.chats().length).toBe(1);
    const at = Date.now();
    stopping.abort();
    await background.drain();
    expect(ran).toBe(true);
    expect(Date.now() - at).toBeLessThan(5_000);
    expect(await job(admin, id)).toMatchObject({ status: "queued" });
    host.setMode("ok");
    expect(await runTranslationJobs(runnerDeps())).toBe(1);
    expect(await job(admin, id)).toMatchObject({ status: "done" });
  });

  it("refuses unsupported languages, English and unknown namespaces; an unknown job is 404", async () => {
    const bad = async (ns: string, body: unknown, status: number, code: string) => {
      const res = await seed(admin, ns, body);
      expect(res.status, await res.clone().text()).toBe(status);
      expect(await res.json()).toMatchObject({ error: code });
    };
    await bad("common", { targetLanguages: ["fr", "xx"] }, 400, "invalid_language");
    await bad("common", { targetLanguages: ["en"] }, 400, "invalid_input");
    await bad("common", { targetLanguages: [] }, 400, "invalid_input");
    await bad("common", { targetLanguages: ["fr"], extra: 1 }, 400, "invalid_input");
    await bad("nosuch", { targetLanguages: ["fr"] }, 404, "not_found");
    expect((await t.request(`/api/v1/translations/jobs/trj_${"0".repeat(26)}`, { headers: admin.headers })).status).toBe(404);
    expect((await t.request("/api/v1/translations/jobs/nonsense", { headers: admin.headers })).status).toBe(400);
  });

  it("is for admins: a member can neither seed nor read a job", async () => {
    const res = await seed(member, "common", { targetLanguages: ["fr"] });
    expect(res.status).toBe(403);
    const queued = await started(await seed(admin, "errors", { targetLanguages: ["it"] }));
    expect((await t.request(`/api/v1/translations/jobs/${queued.jobId}`, { headers: member.headers })).status).toBe(403);
    await until(queued.jobId, "done");
  });
});
