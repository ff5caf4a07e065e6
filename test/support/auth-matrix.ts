import { generateKeyPair } from "jose";
import { expect, it } from "vitest";
import type { TestApp } from "./app";
import type { TestIssuer } from "./issuer";
import { concretePath, type RouteCase } from "./routes";
import { json, newUser } from "./users";

export interface MatrixContext {
  app: () => TestApp;
  /** Another instance of the same app, with nothing remembered (a second server, a new isolate). */
  freshApp: () => TestApp;
  issuer: () => TestIssuer;
}

function init(route: Pick<RouteCase, "method" | "body">, headers: Record<string, string>): RequestInit {
  const hasBody = route.body !== undefined;
  return {
    method: route.method,
    headers: hasBody ? { "content-type": "application/json", ...headers } : headers,
    body: hasBody ? JSON.stringify(route.body) : undefined,
  };
}

async function call(ctx: MatrixContext, route: RouteCase, headers: Record<string, string>) {
  const res = await ctx.app().request(concretePath(route), init(route, headers));
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // A streamed or binary answer (voice): the status is what the matrix checks.
  }
  return { status: res.status, body, text: text.slice(0, 300) };
}

const bearer = (credential: string) => ({ authorization: `Bearer ${credential}` });

/** A fresh admin and an API key they made through the API. */
async function adminKey(ctx: MatrixContext): Promise<{ key: string; keyId: string; sub: string; email: string }> {
  const admin = await newUser(ctx.issuer(), { admin: true });
  const res = await ctx.app().request("/api/v1/admin/api-keys", json({ name: "matrix" }, admin.headers));
  expect(res.status, await res.clone().text()).toBe(201);
  const { key, keyId } = (await res.json()) as { key: string; keyId: string };
  return { key, keyId, sub: admin.sub, email: admin.email };
}

/**
 * The shared security checks, run for one route: no credential, malformed and forged tokens, a
 * revoked key and a demoted admin's key → 401; a non-admin on an admin route → 403; the right
 * caller, with a token and with an admin API key → exactly the status the route's entry expects.
 */
export function authMatrix(ctx: MatrixContext, route: RouteCase): void {
  if (route.access === "public") {
    it(`answers ${route.expect} without credentials`, async () => {
      const { status, text } = await call(ctx, route, {});
      expect(status, text).toBe(route.expect);
    });
    return;
  }

  if (route.access === "webhook") {
    it("needs the provider's own signature, not a bearer token or an API key", async () => {
      expect((await call(ctx, route, {})).status).toBe(401);
      const user = await newUser(ctx.issuer(), { admin: true });
      expect((await call(ctx, route, user.headers)).status).toBe(401);
      expect((await call(ctx, route, bearer((await adminKey(ctx)).key))).status).toBe(401);
      const forged = { "x-signature": "0".repeat(64), "verification-hash": "forged", "verif-hash": "forged", "x-nowpayments-sig": "0".repeat(128) };
      expect((await call(ctx, route, forged)).status).toBe(401);
    });
    return;
  }

  if (route.access === "observability") {
    it("needs the observability token, not a bearer token or an API key", async () => {
      expect((await call(ctx, route, {})).status).toBe(401);
      expect((await call(ctx, route, { "x-observability-token": "wrong-token-wrong-token" })).status).toBe(401);
      const admin = await newUser(ctx.issuer(), { admin: true });
      expect((await call(ctx, route, admin.headers)).status).toBe(401);
      expect((await call(ctx, route, bearer((await adminKey(ctx)).key))).status).toBe(401);
    });
    return;
  }

  it("answers 401 'missing key' without credentials", async () => {
    const { status, body } = await call(ctx, route, {});
    expect(status).toBe(401);
    // The authentication layer answers shape 1 on every route, AI routes included.
    expect(body).toMatchObject({ error: "unauthorized", message: "missing key", code: 401 });
  });

  it("answers 401 to malformed credentials", async () => {
    for (const authorization of ["Bearer", "Bearer not-a-token", "Basic dXNlcjpwYXNz", "Bearer a.b.c", `Bearer ${"f".repeat(64)}`]) {
      const { status, body } = await call(ctx, route, { authorization });
      expect(status, authorization).toBe(401);
      expect(body.error).toBe("unauthorized");
    }
  });

  it("answers 401 to a forged token", async () => {
    const { privateKey } = await generateKeyPair("RS256");
    const forged = await ctx.issuer().sign({ sub: "forger", roles: ["admin"] }, { key: privateKey });
    const { status } = await call(ctx, route, bearer(forged));
    expect(status).toBe(401);
  });

  it("answers 401 to a revoked API key, and to the key of a demoted admin even after their old admin token is replayed", async () => {
    const revoked = await adminKey(ctx);
    const admin = await ctx.issuer().sign({ sub: revoked.sub, email: revoked.email, roles: ["admin"] });
    expect((await ctx.app().request(`/api/v1/admin/api-keys/${revoked.keyId}`, { method: "DELETE", headers: bearer(admin) })).status).toBe(200);
    expect((await call(ctx, route, bearer(revoked.key))).status).toBe(401);

    const demoted = await adminKey(ctx);
    const now = Math.floor(Date.now() / 1000);
    const oldAdmin = await ctx.issuer().sign({ sub: demoted.sub, email: demoted.email, roles: ["admin"] }, { issuedAt: now - 10 });
    const member = await ctx.issuer().sign({ sub: demoted.sub, email: demoted.email, roles: [] }, { issuedAt: now });
    expect((await ctx.app().request("/v1/auth/test", { headers: bearer(member) })).status).toBe(200);
    // The admin token from before the demotion, still valid, on an instance that never saw it.
    expect((await ctx.freshApp().request("/v1/auth/test", { headers: bearer(oldAdmin) })).status).toBe(200);
    expect((await call(ctx, route, bearer(demoted.key))).status).toBe(401);
  });

  if (route.access === "admin") {
    it("answers 403 to a signed-in non-admin", async () => {
      const user = await newUser(ctx.issuer());
      const { status, body } = await call(ctx, route, user.headers);
      expect(status).toBe(403);
      // decisions.md: the AI routes fail in their own shape, the admin check included.
      if (route.template.startsWith("/api/v1/ai-agents/")) expect(body).toMatchObject({ success: false, error: { code: "forbidden" } });
      else expect(body).toMatchObject({ error: "forbidden", code: 403 });
    });
  }

  it(`answers the right caller's token ${route.expect}`, async () => {
    const caller = await newUser(ctx.issuer(), { admin: route.access === "admin" });
    const { status, text } = await call(ctx, route, caller.headers);
    expect(status, text).toBe(route.expect);
  });

  it(`answers an admin API key ${route.apiKey ?? route.expect}`, async () => {
    const { key } = await adminKey(ctx);
    const { status, text } = await call(ctx, route, bearer(key));
    expect(status, text).toBe(route.apiKey ?? route.expect);
  });

  const aimed = route.otherMember;
  if (aimed) {
    it("answers a hidden member, a deleted one and one with a block either way exactly as an unknown id, to a token and to an API key", async () => {
      const app = ctx.app();
      const send = async (id: string, headers: Record<string, string>) => {
        const target = aimed(id);
        const res = await app.request(target.path ?? concretePath(route), init({ method: route.method, body: target.body ?? route.body }, headers));
        const { requestId: _differs, ...body } = (await res.json()) as Record<string, unknown>;
        return { status: res.status, body };
      };
      const memberId = async (headers: Record<string, string>) => {
        const res = await app.request("/v1/auth/test", { headers });
        return ((await res.json()) as { user: { id: string } }).user.id;
      };
      const key = await adminKey(ctx);
      const keyHolder = bearer(await ctx.issuer().sign({ sub: key.sub, email: key.email, roles: ["admin"] }));
      const member = (await newUser(ctx.issuer())).headers;
      const [hidden, blocked, blocker, deleted] = [(await newUser(ctx.issuer())).headers, (await newUser(ctx.issuer())).headers, (await newUser(ctx.issuer())).headers, (await newUser(ctx.issuer())).headers];
      const profile = { displayName: "Matrix", birthDate: "1990-01-01", gender: "other", interestedIn: ["woman"] };
      for (const [who, visibility] of [[hidden, "hidden"], [blocked, "visible"], [blocker, "visible"], [deleted, "visible"]] as const) {
        expect((await app.request("/api/v1/profile", { ...json({ ...profile, visibility }, who), method: "PUT" })).status).toBe(201);
      }
      const ids = { hidden: await memberId(hidden), blocked: await memberId(blocked), blocker: await memberId(blocker), deleted: await memberId(deleted) };
      expect((await app.request("/api/v1/account", { ...json({ confirm: "DELETE" }, deleted), method: "DELETE" })).status).toBe(200);
      for (const caller of [member, keyHolder]) {
        expect((await app.request("/api/v1/blocks", json({ userId: ids.blocked }, caller))).status).toBeLessThan(300);
        expect((await app.request("/api/v1/blocks", json({ userId: await memberId(caller) }, blocker))).status).toBeLessThan(300);
      }
      for (const credential of [member, bearer(key.key)]) {
        const unknown = await send("usr_00000000000000000000000000", credential);
        expect(unknown.status).toBe(404);
        for (const id of Object.values(ids)) expect(await send(id, credential), id).toEqual(unknown);
      }
    });
  }
}
