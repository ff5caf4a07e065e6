import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { outboxMessages, partners } from "../../src/db/tables/partners";
import { buildTestApp } from "../support/app";
import { tableResolver } from "../support/document-server";
import { useTestEnvironment } from "../support/environment";
import { expectError } from "../support/errors";
import { APPLICATION, applyAsPartner, putProfile, review, setWebhook } from "../support/partners";
import { ENTERPRISE, signIn } from "../support/people";
import { json } from "../support/users";

const env = useTestEnvironment();

const RESOLVER = {
  "hooks.example": ["93.184.216.34"],
  "loopback.example": ["127.0.0.1"],
  "internal.example": ["10.1.2.3"],
  "mixed.example": ["93.184.216.34", "192.168.1.10"],
  "v6-loopback.example": ["::1"],
};

const app = (env2: Record<string, string> = {}) =>
  buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE, env: env2, deps: { resolver: tableResolver(RESOLVER) } });

describe("partner applications", () => {
  it("creates the profile at once in review; a second application is 409", async () => {
    const t = app();
    const member = await signIn(t, env.issuer);
    const profile = await applyAsPartner(t, member);
    expect(profile).toMatchObject({ ...APPLICATION, status: "pending_review", userId: member.id, rejectionReason: null, reviewedAt: null });
    expect(profile.partnerId).toMatch(/^ptn_[0-9a-z]{26}$/);
    expect(profile.webhook).toEqual({ url: null, events: [], enabled: false, disabledReason: null, disabledAt: null });
    await expectError(await t.request("/api/v1/partners/apply", json(APPLICATION, member.headers)), 409, "conflict");
  });

  it("answers 400 naming the fields of an invalid application", async () => {
    const t = app();
    const member = await signIn(t, env.issuer);
    const body = await expectError(await t.request("/api/v1/partners/apply", json({ ...APPLICATION, contactEmail: "nope", country: "kenya" }, member.headers)), 400, "invalid_input");
    expect(body.details?.map((d) => d.path).sort()).toEqual(["contactEmail", "country"]);
    await expectError(await t.request("/api/v1/partners/apply", json({ ...APPLICATION, extra: 1 }, member.headers)), 400, "invalid_input");
  });

  it("shows each member only their own profile: 404 before applying, never someone else's", async () => {
    const t = app();
    const [a, b] = [await signIn(t, env.issuer), await signIn(t, env.issuer)];
    await expectError(await t.request("/api/v1/partner/profile", { headers: a.headers }), 404, "not_found");
    const mine = await applyAsPartner(t, a);
    await expectError(await t.request("/api/v1/partner/profile", { headers: b.headers }), 404, "not_found");
    await expectError(await putProfile(t, b, { companyName: "Hijack" }), 404, "not_found");
    const res = await t.request("/api/v1/partner/profile", { headers: a.headers });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { partnerId: string }).partnerId).toBe(mine.partnerId);
  });
});

describe("partner review", () => {
  it("lets an admin list by status, approve once and record the decision; a member gets 403", async () => {
    const t = app();
    const admin = await signIn(t, env.issuer, { admin: true });
    const member = await signIn(t, env.issuer);
    const profile = await applyAsPartner(t, member);

    await expectError(await t.request("/api/v1/admin/partners", { headers: member.headers }), 403, "forbidden");
    await expectError(await review(t, member, profile.partnerId, "approve"), 403, "forbidden");

    const listed = (await (await t.request("/api/v1/admin/partners?status=pending_review&limit=100", { headers: admin.headers })).json()) as { partners: { partnerId: string; webhook: Record<string, unknown> }[] };
    const entry = listed.partners.find((p) => p.partnerId === profile.partnerId);
    expect(entry).toBeDefined();
    expect(entry?.webhook).not.toHaveProperty("secret");

    const approved = await review(t, admin, profile.partnerId, "approve");
    expect(approved.status).toBe(200);
    expect(await approved.json()).toMatchObject({ status: "approved", rejectionReason: null });
    const requestId = approved.headers.get("x-request-id");
    const [row] = await env.db.database.db.select().from(partners).where(eq(partners.id, profile.partnerId));
    expect(row).toMatchObject({ status: "approved", reviewedBy: admin.id, reviewRequestId: requestId });
    expect(row?.reviewedAt).toBeInstanceOf(Date);

    const audit = (await (await t.request(`/api/v1/admin/audit?targetType=partner&targetId=${profile.partnerId}`, { headers: admin.headers })).json()) as { entries: unknown[] };
    expect(audit.entries).toEqual([
      expect.objectContaining({ action: "partner.approve", actorUserId: admin.id, credential: "token", targetId: profile.partnerId, requestId, details: { companyName: APPLICATION.companyName } }),
    ]);

    await expectError(await review(t, admin, profile.partnerId, "reject"), 409, "conflict");
    const afterRefusal = (await (await t.request(`/api/v1/admin/audit?targetType=partner&targetId=${profile.partnerId}`, { headers: admin.headers })).json()) as { entries: unknown[] };
    expect(afterRefusal.entries).toHaveLength(1);
    await expectError(await review(t, admin, "ptn_00000000000000000000000000", "approve"), 404, "not_found");
    await expectError(await t.request("/api/v1/admin/partners/not-an-id/approve", json({}, admin.headers)), 400, "invalid_input");
    await expectError(await t.request("/api/v1/admin/partners?status=maybe", { headers: admin.headers }), 400, "invalid_input");
  });

  it("queues the decision to the partner's endpoint in the same transaction, and nothing without an endpoint", async () => {
    const t = app();
    const admin = await signIn(t, env.issuer, { admin: true });
    const [withHook, without] = [await signIn(t, env.issuer), await signIn(t, env.issuer)];
    const a = await applyAsPartner(t, withHook);
    const b = await applyAsPartner(t, without);
    await setWebhook(t, withHook, { url: "https://hooks.example/dating" });

    expect((await review(t, admin, a.partnerId, "reject", "Website does not match")).status).toBe(200);
    expect((await review(t, admin, b.partnerId, "approve")).status).toBe(200);

    const queued = await env.db.database.db.select().from(outboxMessages).where(eq(outboxMessages.targetId, a.partnerId));
    const decision = queued.find((m) => m.kind === "partner.application.rejected");
    expect(JSON.parse(decision?.body ?? "{}")).toMatchObject({ type: "partner.application.rejected", data: { partnerId: a.partnerId, status: "rejected", reason: "Website does not match" } });
    expect(await env.db.database.db.select().from(outboxMessages).where(eq(outboxMessages.targetId, b.partnerId))).toEqual([]);
    const audit = (await (await t.request(`/api/v1/admin/audit?action=partner.reject&targetId=${a.partnerId}`, { headers: admin.headers })).json()) as { entries: unknown[] };
    expect(audit.entries).toEqual([expect.objectContaining({ targetType: "partner", details: expect.objectContaining({ reason: "Website does not match" }) })]);
  });
});

describe("partner profile and webhook settings", () => {
  it("updates only the fields sent, shows the secret once, and rotates it", async () => {
    const t = app();
    const member = await signIn(t, env.issuer);
    await applyAsPartner(t, member);
    const res = await putProfile(t, member, { companyName: "Sky Dates" });
    expect(await res.json()).toMatchObject({ companyName: "Sky Dates", contactName: APPLICATION.contactName });

    const first = await setWebhook(t, member, { url: "https://hooks.example/dating" });
    expect(first.webhook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(first.webhook).toMatchObject({ url: "https://hooks.example/dating", enabled: true, events: ["partner.application.approved", "partner.application.rejected", "partner.profile.updated"] });
    const again = await setWebhook(t, member, { url: "https://hooks.example/other", events: ["partner.profile.updated"] });
    expect(again.webhook).not.toHaveProperty("secret");
    expect(again.webhook.events).toEqual(["partner.profile.updated"]);
    const read = await (await t.request("/api/v1/partner/profile", { headers: member.headers })).text();
    expect(read).not.toContain("whsec_");

    const rotated = await t.request("/api/v1/partner/webhook/rotate-secret", json({}, member.headers));
    expect(rotated.status).toBe(200);
    const { secret } = (await rotated.json()) as { secret: string };
    expect(secret).toMatch(/^whsec_/);
    expect(secret).not.toBe(first.webhook.secret);

    await expectError(await putProfile(t, member, { webhook: { url: "https://hooks.example/x", events: ["partner.unknown"] } }), 400, "invalid_input");
  });

  it("refuses rotation and test events before a webhook is set", async () => {
    const t = app();
    const member = await signIn(t, env.issuer);
    await applyAsPartner(t, member);
    await expectError(await t.request("/api/v1/partner/webhook/rotate-secret", json({}, member.headers)), 409, "conflict");
    await expectError(await t.request("/api/v1/partner/webhook/test", json({}, member.headers)), 409, "conflict");
  });

  const refused: [string, string][] = [
    ["loopback literal", "https://127.0.0.1/hook"],
    ["localhost", "https://localhost/hook"],
    ["IPv6 loopback", "https://[::1]/hook"],
    ["private 10/8", "https://10.0.0.1/hook"],
    ["private 192.168/16", "https://192.168.0.1/hook"],
    ["link-local metadata", "https://169.254.169.254/latest"],
    ["unique-local IPv6", "https://[fd00::1]/hook"],
    ["multicast", "https://224.0.0.1/hook"],
    ["decimal loopback", "https://2130706433/hook"],
    ["a name resolving to loopback", "https://loopback.example/hook"],
    ["a name resolving to a private address", "https://internal.example/hook"],
    ["a name with one private address", "https://mixed.example/hook"],
    ["a name resolving to IPv6 loopback", "https://v6-loopback.example/hook"],
    ["a name that does not resolve", "https://nowhere.example/hook"],
    ["not http", "ftp://hooks.example/hook"],
    ["credentials in the URL", "https://user:pw@hooks.example/hook"],
    ["not a URL", "hooks"],
  ];
  it.each(refused)("refuses a webhook URL: %s (400 naming the URL)", async (_name, url) => {
    const t = app();
    const member = await signIn(t, env.issuer);
    await applyAsPartner(t, member);
    const body = await expectError(await putProfile(t, member, { webhook: { url } }), 400, "invalid_input");
    expect(body.details?.[0]?.path).toBe("webhook.url");
    expect(body.message).toContain(url.slice(0, 20));
  });

  it("accepts plain http outside production only", async () => {
    const dev = app();
    const member = await signIn(dev, env.issuer);
    await applyAsPartner(dev, member);
    expect((await putProfile(dev, member, { webhook: { url: "http://hooks.example/h" } })).status).toBe(200);
    const prod = app({ NODE_ENV: "production" });
    const body = await expectError(await putProfile(prod, member, { webhook: { url: "http://hooks.example/h" } }), 400, "invalid_input");
    expect(body.message).toContain("https");
  });
});
