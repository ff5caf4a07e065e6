import { describe, expect, it } from "vitest";
import { fixedClock } from "../../src/platform/clock";
import { buildTestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { randomSuffix } from "../support/services";

const env = useTestEnvironment();

const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });

describe("remembered token verifications", () => {
  it("never outlive the token's expiry", async () => {
    const start = Date.now();
    const clock = fixedClock(start);
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer, clock });
    const token = await env.issuer.sign({ sub: `u-${randomSuffix()}` }, { expiresIn: Math.floor(start / 1000) + 45 });
    expect((await t.request("/v1/auth/test", bearer(token))).status).toBe(200);
    clock.advance(44_000);
    expect((await t.request("/v1/auth/test", bearer(token))).status).toBe(200);
    // Past exp plus the 30 s tolerance: the remembered verification must not answer.
    clock.advance(32_000);
    expect((await t.request("/v1/auth/test", bearer(token))).status).toBe(401);
  });

  it("are keyed by the whole token: a tampered copy of a verified token fails", async () => {
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer });
    const token = await env.issuer.sign({ sub: `u-${randomSuffix()}`, roles: [] });
    expect((await t.request("/v1/auth/test", bearer(token))).status).toBe(200);
    const [header, payload, signature] = token.split(".") as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString()) as Record<string, unknown>;
    const forged = Buffer.from(JSON.stringify({ ...claims, roles: ["admin"] })).toString("base64url");
    const res = await t.request("/v1/auth/test", bearer(`${header}.${forged}.${signature}`));
    expect(res.status).toBe(401);
  });
});
