import { expect } from "vitest";
import type { Clock } from "../../src/platform/clock";
import { buildTestApp, type TestApp } from "./app";
import { routedFetch, tableResolver } from "./document-server";
import type { TestDatabase } from "./database";
import type { TestIssuer } from "./issuer";
import { ENTERPRISE, signIn, type Person } from "./people";
import { json, type TestUser } from "./users";
import type { WebhookReceiver } from "./webhook-receiver";

/** The host partner webhooks point at in tests: a loopback receiver, reached by name. */
export const HOOKS_HOST = "hooks.test";

/** An app whose partner webhooks may point at HOOKS_HOST on loopback, every caller on the enterprise tier. */
export function partnerHooksApp(env: { readonly db: TestDatabase; readonly issuer: TestIssuer }, options: { clock?: Clock } = {}): TestApp {
  return buildTestApp({
    database: env.db.database,
    issuer: env.issuer,
    tierLookup: ENTERPRISE,
    ...(options.clock ? { clock: options.clock } : {}),
    fetch: routedFetch([HOOKS_HOST]),
    deps: { resolver: tableResolver({ [HOOKS_HOST]: ["127.0.0.1"] }), webhookAllowedHosts: [HOOKS_HOST] },
  });
}

export const APPLICATION = {
  companyName: "Rooftop Dates Ltd",
  contactName: "Amina Otieno",
  contactEmail: "amina@rooftop.example",
  website: "https://rooftop.example",
  description: "Rooftop venue with dinners for two.",
  businessType: "venue",
  country: "KE",
};

export interface Profile {
  partnerId: string;
  status: string;
  webhook: { url: string | null; events: string[]; enabled: boolean; disabledReason: string | null; secret?: string };
  [key: string]: unknown;
}

export async function applyAsPartner(t: TestApp, user: TestUser, body: Record<string, unknown> = APPLICATION): Promise<Profile> {
  const res = await t.request("/api/v1/partners/apply", json(body, user.headers));
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as Profile;
}

export const putProfile = (t: TestApp, user: TestUser, body: unknown) => t.request("/api/v1/partner/profile", { ...json(body, user.headers), method: "PUT" });

/** Sets the webhook and returns the profile with the secret shown once. */
export async function setWebhook(t: TestApp, user: TestUser, webhook: Record<string, unknown>): Promise<Profile> {
  const res = await putProfile(t, user, { webhook });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as Profile;
}

export async function review(t: TestApp, admin: TestUser, partnerId: string, decision: "approve" | "reject", reason = "not a fit"): Promise<Response> {
  return t.request(`/api/v1/admin/partners/${partnerId}/${decision}`, json(decision === "reject" ? { reason } : {}, admin.headers));
}

/** A new member, a partner at once, whose webhook points at `receiver`, which verifies with its secret. */
export async function partnerHookedTo(t: TestApp, issuer: TestIssuer, receiver: WebhookReceiver): Promise<{ member: Person; partnerId: string }> {
  const member = await signIn(t, issuer);
  const { partnerId } = await applyAsPartner(t, member);
  const profile = await setWebhook(t, member, { url: `http://${HOOKS_HOST}:${receiver.port}/hooks` });
  receiver.secrets = [profile.webhook.secret as string];
  return { member, partnerId };
}
