import { beforeAll, describe, expect, it } from "vitest";
import { idPattern } from "../../src/platform/ids";
import { buildTestApp, type TestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { OUTSIDE_PARTIES_UNREACHABLE } from "../support/routes";
import { json, newUser, type TestUser } from "../support/users";

const env = useTestEnvironment();

const hex = (bytes: number) => Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, "0")).join("");
const base64 = (bytes: number) => btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(bytes))));

/** A provider credential of no particular shape: known to the log only as a configured value. */
const PROVIDER_SECRET = `ca-live-${hex(6)}`;
const CARD_B_HASH = `card-b-hash-${hex(6)}`;

let t: TestApp;
let member: TestUser;
const secrets: Record<string, string> = {};

beforeAll(async () => {
  t = buildTestApp({
    database: env.db.database,
    issuer: env.issuer,
    env: { ...OUTSIDE_PARTIES_UNREACHABLE, CARD_A_API_KEY: PROVIDER_SECRET, CARD_B_WEBHOOK_SECRET: CARD_B_HASH },
  });
  member = await newUser(env.issuer);
  const admin = await newUser(env.issuer, { admin: true });
  const created = await t.request("/api/v1/admin/api-keys", json({ name: "redaction" }, admin.headers));
  Object.assign(secrets, {
    "an API key": ((await created.json()) as { key: string }).key,
    "a JWT": (await newUser(env.issuer, { admin: true })).token,
    "a webhook secret": `whsec_${base64(24)}`,
    "a callback token": hex(32),
    "a provider secret": PROVIDER_SECRET,
  });
});

/** Every log line the app wrote during `work`, as text. */
async function logged(work: () => Promise<unknown>): Promise<string> {
  const from = t.logs.length;
  await work();
  return t.logs.slice(from).map((l) => JSON.stringify(l)).join("\n");
}

/** The secret itself, or the tail of it that no two secrets share. */
function expectAbsent(text: string, secret: string): void {
  expect(text).not.toContain(secret);
  expect(text).not.toContain(secret.slice(-16));
}

describe.each(["an API key", "a JWT", "a webhook secret", "a callback token", "a provider secret"])("%s", (kind) => {
  it("stays out of the log when it arrives in a path", async () => {
    const secret = secrets[kind] as string;
    const text = await logged(async () => {
      expect((await t.request(`/api/v1/nowhere/${encodeURIComponent(secret)}`)).status).toBe(404);
      expect((await t.request(`/api/v1/profile/${encodeURIComponent(secret)}`, { headers: member.headers })).status).toBe(400);
      await t.request(`/api/v1/mobile-money/callback/${encodeURIComponent(secret).slice(0, 128)}`, json({ Body: {} }));
    });
    expect(text).toContain('"msg":"request"');
    expectAbsent(text, secret);
  });

  it("stays out of the log when it arrives in a query", async () => {
    const secret = secrets[kind] as string;
    const text = await logged(async () => {
      const q = encodeURIComponent(secret);
      expect((await t.request(`/api/v1/wallet/overview?token=${q}&ref=${q}`, { headers: member.headers })).status).toBe(200);
      expect((await t.request(`/api/v1/payments/card-b/redirect?tx_ref=${q.slice(0, 64)}&status=${q.slice(0, 32)}`)).status).toBe(404);
    });
    expect(text).toContain('"msg":"request"');
    expectAbsent(text, secret);
  });

  it("stays out of the log when it arrives in a header, and an X-Request-Id not of our shape is replaced", async () => {
    const secret = secrets[kind] as string;
    let answered: string | null = null;
    const text = await logged(async () => {
      const res = await t.request("/api/v1/wallet/overview", { headers: { ...member.headers, "x-request-id": secret, "x-trace": secret } });
      expect(res.status).toBe(200);
      answered = res.headers.get("x-request-id");
      expect((await t.request("/v1/auth/test", { headers: { authorization: `Bearer ${secret}x` } })).status).toBe(401);
      expect((await t.request("/v1/auth/test", { headers: { authorization: `Basic ${secret}` } })).status).toBe(401);
    });
    expect(answered).toMatch(idPattern("req"));
    expectAbsent(text, secret);
  });

  it("stays out of the log when it arrives in a body field that is logged", async () => {
    const secret = secrets[kind] as string;
    const text = await logged(async () => {
      // A genuine card-b delivery (the hash is right) whose fields are not ours: logged as ignored.
      const res = await t.request("/api/v1/payments/card-b/webhook", json({ event: secret, data: { id: 1 } }, { "verification-hash": CARD_B_HASH }));
      expect(res.status).toBe(200);
    });
    expect(text).toContain("card-b webhook ignored");
    expectAbsent(text, secret);
  });
});

describe("request ids", () => {
  it("keep an incoming X-Request-Id of our own shape, and replace any other", async () => {
    const ours = "req_01m8f4dt4reg5k6qxcfy7hxfra";
    expect((await t.request("/nope", { headers: { "x-request-id": ours } })).headers.get("x-request-id")).toBe(ours);
    for (const other of ["client-abc-12345", "req_short", `req_${"z".repeat(26)}x`, "REQ_01M8F4DT4REG5K6QXCFY7HXFRA"]) {
      const replaced = (await t.request("/nope", { headers: { "x-request-id": other } })).headers.get("x-request-id");
      expect(replaced, other).toMatch(idPattern("req"));
      expect(replaced).not.toBe(other);
    }
  });
});
