import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { queryRows } from "../../src/db/rows";
import { sha256Hex } from "../../src/platform/hash";
import { buildTestApp, fixedClock, type TestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { award, ENTERPRISE, signIn, type Person } from "../support/people";
import { json } from "../support/users";

const env = useTestEnvironment();
// Frozen: the download window and the daily limit are crossed by moving it, never by sleeping.
const clock = fixedClock(Date.parse("2026-11-20T12:00:00.000Z"));
let t: TestApp;
let admin: Person;
const T = "2026-11-01T10:00:00.000Z";
const HOUR = 3_600_000;
/** Raw rows carry timestamps as the driver gives them (text with pg). */
const iso = (v: Date | string) => new Date(v).toISOString();

beforeAll(async () => {
  t = buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE, clock });
  admin = await signIn(t, env.issuer, { admin: true });
});

const db = () => env.db.database.session().db;

interface ExportState {
  exportId: string;
  status: string;
  readyAt: string | null;
  expiresAt: string | null;
  byteSize: number | null;
  download: { url: string; expiresAt: string } | null;
}

async function requestExport(who: Person): Promise<string> {
  const res = await t.request("/api/v1/account/export", { method: "POST", headers: who.headers });
  const text = await res.text();
  expect(res.status, text).toBe(202);
  const { exportId } = JSON.parse(text) as { exportId: string };
  expect(res.headers.get("location")).toBe(`/api/v1/account/exports/${exportId}`);
  return exportId;
}

const state = async (who: Person, id: string) => t.request(`/api/v1/account/exports/${id}`, { headers: who.headers });

/** Polls the export until it is ready (the build runs after the answer), or fails after the deadline. */
async function ready(who: Person, id: string, deadlineMs = 20_000): Promise<ExportState> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const res = await state(who, id);
    expect(res.status).toBe(200);
    const s = (await res.json()) as ExportState;
    if (s.status === "ready") return s;
    if (s.status === "failed" || Date.now() > end) throw new Error(`export ${id} is ${s.status}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function download(url: string): Promise<{ status: number; text: string; res: Response }> {
  const res = await t.request(url);
  return { status: res.status, text: await res.text(), res };
}

/** A member with something in every area, and another (`stranger`) whose data about them must never show. */
async function fillEveryArea(member: Person, friend: Person, stranger: Person): Promise<void> {
  const m = member.id;
  const [low, high] = m < friend.id ? [m, friend.id] : [friend.id, m];
  await db().execute(sql`insert into profiles (user_id, display_name, birth_date, gender, interested_in, bio, tagline, interests, photos, languages, latitude, longitude, city, country, visibility, age_min, age_max, max_distance_km, created_at, updated_at, last_active_at)
    values (${m}, 'Ama', '1995-04-02', 'woman', '{man}', 'Hiker and reader.', 'Say hi', '{hiking,books}', '{https://img.example/a.jpg}', '{en,sw}', -1.29, 36.82, 'Nairobi', 'KE', 'visible', 25, 40, 50, ${T}, ${T}, ${T})`);
  await db().execute(sql`insert into swipes (swiper_id, target_id, action, created_at) values (${m}, ${friend.id}, 'like', ${T}), (${stranger.id}, ${m}, 'like', ${T})`);
  await db().execute(sql`insert into matches (id, user_low, user_high, created_at) values ('mat_export', ${low}, ${high}, ${T})`);
  await db().execute(sql`insert into winks (id, sender_id, recipient_id, message, status, match_id, created_at, responded_at) values
    ('wnk_export_sent', ${m}, ${friend.id}, 'Hello!', 'accepted', 'mat_export', ${T}, ${T}), ('wnk_export_got', ${stranger.id}, ${m}, 'psst', 'pending', null, ${T}, null)`);
  await db().execute(sql`insert into blocks (blocker_id, blocked_id, created_at) values (${stranger.id}, ${m}, ${T}), (${m}, ${friend.id}, ${T})`);
  await db().execute(sql`insert into reports (id, reporter_id, reported_id, reason, details, created_at) values
    ('rep_export_made', ${m}, ${friend.id}, 'spam', 'sent links', ${T}), ('rep_export_about', ${stranger.id}, ${m}, 'harassment', 'by the stranger', ${T})`);
  await db().execute(sql`insert into payments (id, provider, user_id, status, amount, currency, coins, provider_ref, callback_token, idempotency_key, details, created_at, updated_at, expires_at)
    values ('mm_export', 'mobile-money', ${m}, 'pending', 500, 'KES', 5, 'ws_CO_1', 'secret-callback-token', 'idem-export', '{"phoneNumber":"254700000001"}', ${T}, ${T}, ${T})`);
  await db().execute(sql`insert into subscriptions (id, user_id, plan_id, current_period_start, current_period_end, created_at, updated_at) values ('sub_export', ${m}, 'premium', ${T}, '2026-12-01T10:00:00.000Z', ${T}, ${T})`);
  await db().execute(sql`insert into subscription_charges (transaction_id, user_id, plan_id, coins, created_at) values (${`txn_charge_${m}`}, ${m}, 'premium', 30, ${T})`);
  await db().execute(sql`insert into voucher_batches (id, coins, count, created_by, created_at) values ('vbt_export', 7, 1, ${admin.id}, ${T})`);
  await db().execute(sql`insert into vouchers (id, batch_id, code_hash, hint, coins, status, redeemed_by, redeemed_at, ledger_transaction_id) values ('vch_export', 'vbt_export', 'voucher-code-hash', 'AB12', 7, 'redeemed', ${m}, ${T}, 'ltx_voucher_export')`);
  await db().execute(sql`insert into support_answers (id, category, language, via, escalated, reasons, cited, created_at) values ('ans_export', 'billing', 'en', 'model', true, '["refund"]', false, ${T})`);
  await db().execute(sql`insert into support_tickets (id, answer_id, user_id, category, language, reasons, status, created_at) values ('tkt_export', 'ans_export', ${m}, 'billing', 'en', '["refund"]', 'open', ${T})`);
  await db().execute(sql`insert into support_video_requests (id, user_id, reason, priority, priority_rank, platform, language, callback_times, timezone, status, created_at)
    values ('svr_export', ${m}, 'Billing question', 'normal', 1, 'ios', 'en', ${JSON.stringify([{ from: T, to: T }])}::jsonb, 'Africa/Nairobi', 'waiting', ${T})`);
  await db().execute(sql`insert into partners (id, user_id, company_name, contact_name, contact_email, description, business_type, country, status, webhook_url, webhook_events, webhook_enabled, webhook_secret, created_at, updated_at)
    values ('ptn_export', ${m}, 'Ama Cafe', 'Ama', 'cafe@example.test', 'Coffee for dates', 'venue', 'KE', 'approved', 'https://hooks.example/a', '["partner.profile.updated"]', true, 'whsec_must_not_leak', ${T}, ${T})`);
  await db().execute(sql`insert into api_keys (id, key_hash, prefix, name, created_by, created_at) values ('key_export', 'api-key-hash-must-not-leak', 'abcd1234', 'scripts', ${m}, ${T})`);
  const key = await sha256Hex(JSON.stringify(["Hiker and reader.", "Say hi", ["hiking", "books"]]));
  await db().execute(sql`insert into translation_cache (kind, cache_key, target_language, result, created_at) values ('profile', ${key}, 'fr', '{"translated":{"bio":"Randonneuse."}}', ${T})`);
  await t.deps.kv.set(`ai:ctx:u:${m}`, JSON.stringify({ profile: { displayName: "Ama" }, conversation: ["Any tips?"], cachedAt: Date.parse(T) }), { ttlMs: HOUR });
  await award(t, admin, m, 50, "welcome");
}

describe("POST /api/v1/account/export, GET /api/v1/account/exports/{exportId} and its download", () => {
  it("exports everything kept about the member, and nothing others keep about them or any secret", async () => {
    const [member, friend, stranger] = await Promise.all([signIn(t, env.issuer), signIn(t, env.issuer), signIn(t, env.issuer)]);
    await fillEveryArea(member, friend, stranger);
    const id = await requestExport(member);
    const s = await ready(member, id);
    expect(s.download!.url).toMatch(new RegExp(`^/api/v1/account/exports/${id}/download\\?token=[0-9a-f]{64}$`));
    expect(s.expiresAt).toBe(new Date(clock.now() + 24 * HOUR).toISOString());
    const { status, text, res } = await download(s.download!.url);
    expect(status, text).toBe(200);
    expect(res.headers.get("content-disposition")).toBe(`attachment; filename="account-export-${id}.json"`);
    expect(new TextEncoder().encode(text).length).toBe(s.byteSize);
    for (const secret of [stranger.id, "by the stranger", "psst", "whsec_must_not_leak", "api-key-hash-must-not-leak", "secret-callback-token", "idem-export", "voucher-code-hash"]) expect(text).not.toContain(secret);

    const doc = JSON.parse(text) as Record<string, unknown>;
    const [user] = await queryRows<{ created_at: string; last_seen_at: string | null }>(db(), sql`select created_at, last_seen_at from users where id = ${member.id}`);
    const [wallet] = await queryRows<{ id: string }>(db(), sql`select id from ledger_accounts where user_id = ${member.id}`);
    const [posting] = await queryRows<{ transaction_id: string; created_at: string }>(db(), sql`select transaction_id, created_at from ledger_postings where account_id = ${wallet!.id}`);
    const [tx] = await queryRows<{ note: string | null }>(db(), sql`select note from ledger_transactions where id = ${posting!.transaction_id}`);
    expect(doc).toEqual({
      formatVersion: 1,
      exportId: id,
      generatedAt: new Date(clock.now()).toISOString(),
      account: { userId: member.id, subject: member.sub, email: member.email, role: "user", displayName: null, createdAt: iso(user!.created_at), lastSeenAt: user!.last_seen_at === null ? null : iso(user!.last_seen_at) },
      profile: { displayName: "Ama", birthDate: "1995-04-02", gender: "woman", bio: "Hiker and reader.", tagline: "Say hi", interests: ["hiking", "books"], languages: ["en", "sw"], latitude: -1.29, longitude: 36.82, city: "Nairobi", country: "KE", createdAt: T, updatedAt: T, lastActiveAt: T },
      photos: [{ url: "https://img.example/a.jpg" }],
      preferences: { interestedIn: ["man"], ageMin: 25, ageMax: 40, maxDistanceKm: 50, visibility: "visible" },
      swipes: [{ targetUserId: friend.id, action: "like", createdAt: T }],
      winksSent: [{ winkId: "wnk_export_sent", toUserId: friend.id, message: "Hello!", status: "accepted", matchId: "mat_export", createdAt: T, respondedAt: T }],
      matches: [{ matchId: "mat_export", otherUserId: friend.id, createdAt: T, unmatchedAt: null, unmatchedByMe: false }],
      blocks: [{ blockedUserId: friend.id, createdAt: T }],
      reportsMade: [{ reportId: "rep_export_made", reportedUserId: friend.id, reason: "spam", details: "sent links", createdAt: T }],
      wallet: { accountId: wallet!.id, balance: 50, history: [{ seq: 1, transactionId: posting!.transaction_id, type: "award", note: tx!.note, amount: 50, balanceAfter: 50, createdAt: iso(posting!.created_at) }] },
      payments: [
        { paymentId: "mm_export", provider: "mobile-money", status: "pending", amount: 500, currency: "KES", coins: 5, providerRef: "ws_CO_1", details: { phoneNumber: "254700000001" }, failureReason: null, createdAt: T, updatedAt: T, completedAt: null, expiresAt: T },
      ],
      subscriptions: [{ subscriptionId: "sub_export", planId: "premium", currentPeriodStart: T, currentPeriodEnd: "2026-12-01T10:00:00.000Z", createdAt: T, updatedAt: T }],
      subscriptionCharges: [{ transactionId: `txn_charge_${member.id}`, planId: "premium", coins: 30, createdAt: T }],
      vouchersRedeemed: [{ voucherId: "vch_export", hint: "AB12", coins: 7, redeemedAt: T }],
      support: {
        tickets: [
          { ticketId: "tkt_export", category: "billing", language: "en", reasons: ["refund"], status: "open", createdAt: T, resolvedAt: null, answer: { answerId: "ans_export", category: "billing", language: "en", via: "model", escalated: true, reasons: ["refund"], cited: false, createdAt: T } },
        ],
        videoRequests: [{ requestId: "svr_export", reason: "Billing question", priority: "normal", platform: "ios", language: "en", callbackTimes: [{ from: T, to: T }], timezone: "Africa/Nairobi", status: "waiting", filedByStaff: false, createdAt: T }],
      },
      aiContext: { profile: { displayName: "Ama" }, conversation: ["Any tips?"], cachedAt: T },
      profileTranslations: [{ targetLanguage: "fr", result: { translated: { bio: "Randonneuse." } }, createdAt: T }],
      partner: {
        partnerId: "ptn_export",
        companyName: "Ama Cafe",
        contactName: "Ama",
        contactEmail: "cafe@example.test",
        website: null,
        description: "Coffee for dates",
        businessType: "venue",
        country: "KE",
        status: "approved",
        reviewedAt: null,
        rejectionReason: null,
        webhook: { url: "https://hooks.example/a", events: ["partner.profile.updated"], enabled: true, disabledReason: null, disabledAt: null },
        createdAt: T,
        updatedAt: T,
      },
      apiKeys: [{ keyId: "key_export", prefix: "abcd1234", name: "scripts", createdAt: T, expiresAt: null, revokedAt: null, lastUsedAt: null }],
    });
  });

  it("hands the document out once, through the newest link only, and not after 24 hours", async () => {
    const member = await signIn(t, env.issuer);
    const first = await ready(member, await requestExport(member));
    // Each read of a ready export issues a new link; the earlier one stops working.
    const again = (await (await state(member, first.exportId)).json()) as ExportState;
    expect(again.download!.url).not.toBe(first.download!.url);
    expect((await download(first.download!.url)).status).toBe(404);
    const taken = await download(again.download!.url);
    expect(taken.status, taken.text).toBe(200);
    expect((JSON.parse(taken.text) as { account: { userId: string } }).account.userId).toBe(member.id);
    const second = await download(again.download!.url);
    expect(second.status).toBe(404);
    expect(JSON.parse(second.text)).toMatchObject({ error: "not_found", code: 404 });
    expect(await (await state(member, first.exportId)).json()).toMatchObject({ status: "expired", download: null });
    const [row] = await queryRows<{ document: string | null; token_hash: string | null }>(db(), sql`select document, token_hash from account_exports where id = ${first.exportId}`);
    expect(row).toEqual({ document: null, token_hash: null });

    const late = await ready(member, await requestExport(member));
    clock.advance(24 * HOUR);
    try {
      expect((await download(late.download!.url)).status).toBe(404);
      expect(await (await state(member, late.exportId)).json()).toMatchObject({ status: "expired", download: null });
    } finally {
      clock.advance(-24 * HOUR);
    }
  });

  it("answers 404 for another member's export, to its state and to a made-up token", async () => {
    const [owner, other] = await Promise.all([signIn(t, env.issuer), signIn(t, env.issuer)]);
    const s = await ready(owner, await requestExport(owner));
    const res = await state(other, s.exportId);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: "not_found" });
    expect((await download(`/api/v1/account/exports/${s.exportId}/download?token=${"a".repeat(64)}`)).status).toBe(404);
    const malformed = await download(`/api/v1/account/exports/${s.exportId}/download?token=nope`);
    expect(malformed.status).toBe(400);
    expect(JSON.parse(malformed.text)).toMatchObject({ error: "invalid_input" });
    expect((await state(other, "exp_bad")).status).toBe(400);
  });

  it("allows 3 exports in 24 hours; the 4th answers 429 with retry_after until the first is a day old", async () => {
    const member = await signIn(t, env.issuer);
    const start = clock.now();
    await requestExport(member);
    clock.advance(HOUR);
    try {
      await requestExport(member);
      await requestExport(member);
      const refused = await t.request("/api/v1/account/export", { method: "POST", headers: member.headers });
      const body = (await refused.json()) as Record<string, unknown>;
      expect(refused.status).toBe(429);
      expect(body).toMatchObject({ error: "rate_limit_exceeded", code: 429, retry_after: 23 * 3600 });
      expect(refused.headers.get("retry-after")).toBe(String(23 * 3600));
      clock.set(start + 24 * HOUR + 1);
      await requestExport(member);
    } finally {
      clock.set(start);
    }
  });

  it("counts simultaneous requests under the member's lock: exactly 3 of 5 are queued", async () => {
    const member = await signIn(t, env.issuer);
    const answers = await Promise.all(Array.from({ length: 5 }, () => t.request("/api/v1/account/export", { method: "POST", headers: member.headers })));
    expect(answers.map((r) => r.status).sort()).toEqual([202, 202, 202, 429, 429]);
    const [count] = await queryRows<{ n: number }>(db(), sql`select count(*)::int as n from account_exports where user_id = ${member.id}`);
    expect(count!.n).toBe(3);
  });

  it("refuses an admin API key: an export takes the member's own access token", async () => {
    const res = await t.request("/api/v1/admin/api-keys", json({ name: "export" }, admin.headers));
    const { key } = (await res.json()) as { key: string };
    const refused = await t.request("/api/v1/account/export", { method: "POST", headers: { authorization: `Bearer ${key}` } });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: "forbidden" });
  });
});
