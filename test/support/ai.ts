import { expect } from "vitest";
import type { KeyValueStore } from "../../src/kv/port";
import { buildTestApp, type TestApp } from "./app";
import type { TestDatabase } from "./database";
import type { TestIssuer } from "./issuer";
import { ENTERPRISE, signIn, type Person } from "./people";
import { json } from "./users";

export const AI = "/api/v1/ai-agents";

/**
 * An app whose inference hosts are the given fakes (enterprise tier, so AI quotas do not
 * interfere), on the in-memory store unless `kv` is given.
 */
export function aiApp(env: { db: TestDatabase; issuer: TestIssuer }, hosts: string[], extra: Record<string, string> = {}, kv?: KeyValueStore): TestApp {
  return buildTestApp({
    database: env.db.database,
    issuer: env.issuer,
    tierLookup: ENTERPRISE,
    kv,
    env: { INFERENCE_URL: hosts.join(","), INFERENCE_MODEL: "wanted-model", INFERENCE_TIMEOUT_MS: "2000", ...extra },
  });
}

export const PROFILE = {
  displayName: "Amani",
  birthDate: "1994-05-17",
  gender: "woman",
  interestedIn: ["man"],
  bio: "Weekend hiker and amateur baker who loves live jazz.",
  interests: ["hiking", "baking", "jazz"],
  city: "Nairobi",
  country: "KE",
};

/** A signed-in member, with a stored profile unless `profile` is null. */
export async function member(t: TestApp, issuer: TestIssuer, profile: Record<string, unknown> | null = PROFILE, options: { admin?: boolean } = {}): Promise<Person> {
  const p = await signIn(t, issuer, options);
  if (profile) {
    const res = await t.request("/api/v1/profile", { ...json(profile, p.headers), method: "PUT" });
    expect([200, 201], await res.clone().text()).toContain(res.status);
  }
  return p;
}

export const post = (t: TestApp, who: Person, path: string, body: unknown, init: RequestInit = {}) => t.request(`${AI}${path}`, { ...json(body, who.headers), ...init });

export interface AiErrorBody {
  success: false;
  error: { code: string; message: string; details: string; language: string };
  timestamp: string;
  requestId: string;
}

/** Asserts a shape-2 error: status, code, echoed language, timestamp and request id. */
export async function expectAiError(res: Response, status: number, code: string, language = "en"): Promise<AiErrorBody> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  const body = JSON.parse(text) as AiErrorBody;
  expect(body).toMatchObject({ success: false, error: { code, language } });
  expect(typeof body.error.message).toBe("string");
  expect(typeof body.error.details).toBe("string");
  expect(Number.isNaN(Date.parse(body.timestamp))).toBe(false);
  expect(body.requestId).toEqual(expect.any(String));
  return body;
}

export interface Envelope<T> {
  success: true;
  data: T & { metadata?: { model_version: string; processing_time: number; tokens_used: number; language: string } };
  timestamp: string;
}

export async function ok<T>(res: Response): Promise<Envelope<T>> {
  const text = await res.text();
  expect(res.status, text).toBe(200);
  const body = JSON.parse(text) as Envelope<T>;
  expect(body.success).toBe(true);
  expect(Number.isNaN(Date.parse(body.timestamp))).toBe(false);
  return body;
}

/** The fence tag of a prompt: every user block is wrapped in <DATA-… name="…">. */
export function fenceTag(system: string): string {
  const m = /<(DATA-[0-9a-f]+) /.exec(system);
  if (!m?.[1]) throw new Error("no fence in the system prompt");
  return m[1];
}
