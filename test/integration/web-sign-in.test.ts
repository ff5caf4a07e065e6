import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixedClock } from "../../src/platform/clock";
import { buildTestApp, type TestApp } from "../support/app";
import { createTestDatabase, type TestDatabase } from "../support/database";
import { expectError } from "../support/errors";
import { startFakePlatformAgent, type FakePlatformAgent } from "../support/fake-platform-agent";
import { startOidcProvider, type OidcProviderHandle } from "../support/oidc-provider";
import { ENTERPRISE } from "../support/people";
import { randomSuffix } from "../support/services";
import { Browser, buildTestWeb, type TestWeb } from "../support/web";

const ORIGIN = "https://web.example.test";
const AUDIENCE = "https://api.web-test.example";
const CLIENT_ID = "web-app";

let provider: OidcProviderHandle;
let db: TestDatabase;
let agent: FakePlatformAgent;
let api: TestApp;
const clock = fixedClock(Date.now());
let web: TestWeb;

beforeAll(async () => {
  [provider, db, agent] = await Promise.all([
    startOidcProvider({ audience: AUDIENCE, webClient: { clientId: CLIENT_ID, redirectUri: `${ORIGIN}/api/auth/callback`, postLogoutRedirectUri: `${ORIGIN}/` } }),
    createTestDatabase(),
    startFakePlatformAgent(),
  ]);
  api = buildTestApp({ database: db.database, tierLookup: ENTERPRISE, env: { OIDC_ISSUER: provider.issuer, OIDC_AUDIENCE: AUDIENCE } });
  web = await buildTestWeb({
    clock,
    api: async (path, init) => api.app.request(path, init),
    env: { WEB_ORIGIN: ORIGIN, OIDC_ISSUER: provider.issuer, OIDC_CLIENT_ID: CLIENT_ID, PLATFORM_AGENT_URL: agent.url },
  });
});

afterAll(async () => {
  await Promise.all([provider?.close(), db?.drop(), agent?.close()]);
});

const newAccount = () => `member-${randomSuffix()}${randomSuffix()}`;

/** Starts a sign-in: the browser holds the sign-in cookie, the answer is the issuer's URL. */
async function startSignIn(browser: Browser, returnTo?: string): Promise<string> {
  const res = await browser.request(`/api/auth/login${returnTo === undefined ? "" : `?returnTo=${encodeURIComponent(returnTo)}`}`);
  expect(res.status).toBe(302);
  return res.headers.get("location") as string;
}

async function signedIn(account = newAccount(), returnTo?: string): Promise<{ browser: Browser; landed: Response; account: string }> {
  const browser = new Browser(web.app, ORIGIN);
  const authorizationUrl = await startSignIn(browser, returnTo);
  const callback = await provider.authorize(authorizationUrl, account);
  const landed = await browser.request(callback.pathname + callback.search);
  return { browser, landed, account };
}

const cookieLine = (browser: Browser, name: string) => browser.lines.filter((l) => l.startsWith(`${name}=`)).at(-1) ?? "";

describe("sign-in", () => {
  it("sends the browser to the issuer with PKCE S256, state and nonce, kept in an encrypted short-lived cookie", async () => {
    const browser = new Browser(web.app, ORIGIN);
    const location = new URL(await startSignIn(browser));
    expect(location.origin).toBe(provider.issuer);
    const q = location.searchParams;
    expect(q.get("code_challenge_method")).toBe("S256");
    expect(q.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(q.get("state")).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(q.get("nonce")).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(q.get("redirect_uri")).toBe(`${ORIGIN}/api/auth/callback`);
    const line = cookieLine(browser, "__Host-signin");
    expect(line).toMatch(/; Max-Age=600; HttpOnly; SameSite=Lax; Secure$/);
    // Encrypted: neither the state nor the verifier can be read from it.
    const value = browser.cookies.get("__Host-signin") as string;
    expect(value.split(".")).toHaveLength(5);
    expect(value).not.toContain(q.get("state"));
  });

  it("sets the two session cookies with every flag and lands on returnTo", async () => {
    const { browser, landed } = await signedIn(undefined, "/wallet?tab=history#recent");
    expect(landed.status).toBe(302);
    expect(landed.headers.get("location")).toBe("/wallet?tab=history#recent");
    for (const name of ["__Host-session", "__Host-refresh"]) {
      const line = cookieLine(browser, name);
      expect(line).toMatch(/; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Lax; Secure$/);
      expect(line).not.toMatch(/domain=/i);
    }
    expect(browser.cookies.has("__Host-signin")).toBe(false);
    // The refresh cookie is a JWE: the refresh token is not in it in clear.
    expect(browser.cookies.get("__Host-refresh")?.split(".")).toHaveLength(5);
    const overview = await browser.request("/api/wallet/overview");
    expect(overview.status).toBe(200);
    expect(await overview.json()).toMatchObject({ balance: 0, tier: expect.any(String) });
  });

  it.each([
    ["an absolute URL elsewhere", "https://evil.example/steal"],
    ["a protocol-relative URL", "//evil.example/steal"],
    ["a backslash trick", "/\\evil.example"],
    ["a scheme", "javascript:alert(1)"],
    ["the sign-in route itself", "/api/auth/login"],
  ])("sends %s as returnTo to / instead", async (_what, returnTo) => {
    const { landed } = await signedIn(undefined, returnTo);
    expect(landed.status).toBe(302);
    expect(landed.headers.get("location")).toBe("/");
  });

  it("refuses a callback whose state differs, and sets no session", async () => {
    const browser = new Browser(web.app, ORIGIN);
    const callback = await provider.authorize(await startSignIn(browser), newAccount());
    callback.searchParams.set("state", "forged-state-value-0123456789");
    const res = await browser.request(callback.pathname + callback.search);
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("Sign-in failed");
    expect(browser.cookies.has("__Host-session")).toBe(false);
    expect(browser.cookies.has("__Host-signin")).toBe(false);
  });

  it("refuses a replayed code", async () => {
    const browser = new Browser(web.app, ORIGIN);
    const callback = await provider.authorize(await startSignIn(browser), newAccount());
    const signinCookie = browser.header();
    expect((await browser.request(callback.pathname + callback.search)).status).toBe(302);
    // The same callback again, with the sign-in cookie an attacker captured.
    const replay = await web.app.request(`${ORIGIN}${callback.pathname}${callback.search}`, { headers: { cookie: signinCookie } });
    expect(replay.status).toBe(400);
    expect(replay.headers.getSetCookie().some((l) => l.startsWith("__Host-session=") && !/Max-Age=0/.test(l))).toBe(false);
  });

  it("refuses an ID token whose nonce is not the one this browser sent", async () => {
    const browser = new Browser(web.app, ORIGIN);
    const url = new URL(await startSignIn(browser));
    url.searchParams.set("nonce", "a-nonce-from-someone-else-0123456789");
    const callback = await provider.authorize(url.href, newAccount());
    const res = await browser.request(callback.pathname + callback.search);
    expect(res.status).toBe(400);
    expect(browser.cookies.has("__Host-session")).toBe(false);
    expect(web.logs.some((l) => l.msg === "sign-in refused" && String(l.reason).includes("nonce"))).toBe(true);
  });

  it("refuses a callback without the sign-in cookie, or with an altered one", async () => {
    const browser = new Browser(web.app, ORIGIN);
    const callback = await provider.authorize(await startSignIn(browser), newAccount());
    const value = browser.cookies.get("__Host-signin") as string;
    // Changes the third-to-last character (clear of base64url's padding bits) to one it is not.
    const at = value.length - 3;
    const altered = `${value.slice(0, at)}${value[at] === "A" ? "B" : "A"}${value.slice(at + 1)}`;
    expect(altered).not.toBe(value);
    for (const cookie of ["", `__Host-signin=${altered}`]) {
      const res = await web.app.request(`${ORIGIN}${callback.pathname}${callback.search}`, { headers: cookie ? { cookie } : {} });
      expect(res.status).toBe(400);
    }
  });
});

describe("proxied calls", () => {
  it("answers 401 without a session", async () => {
    const browser = new Browser(web.app, ORIGIN);
    await expectError(await browser.request("/api/wallet/overview"), 401, "unauthorized");
  });

  it("forwards the transfer with its Idempotency-Key: one transfer for two sends", async () => {
    const { browser } = await signedIn();
    const adminToken = await provider.login(`admin-${randomSuffix()}`, { roles: ["admin"] });
    const me = (await (await browser.request("/api/wallet/overview")).json()) as { userId: string };
    const award = await api.app.request("/api/v1/wallet/coins/award", { method: "POST", headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" }, body: JSON.stringify({ userId: me.userId, amount: 100, reason: "web test" }) });
    expect(award.status).toBe(200);
    const { browser: other } = await signedIn();
    const recipient = (await (await other.request("/api/wallet/overview")).json()) as { userId: string };
    const send = () =>
      browser.request("/api/wallet/transfer", { method: "POST", site: "same-origin", headers: { "content-type": "application/json", "idempotency-key": "web-key-1" }, body: JSON.stringify({ toUserId: recipient.userId, amount: 30 }) });
    const first = await send();
    expect(first.status).toBe(200);
    expect(await first.json()).toMatchObject({ success: true, balance: 70, transferredAmount: 30 });
    expect((await send()).status).toBe(200);
    expect(await (await browser.request("/api/wallet/overview")).json()).toMatchObject({ balance: 70 });
    const history = await browser.request("/api/wallet/transactions?limit=1");
    expect(history.status).toBe(200);
    expect(((await history.json()) as { transactions: unknown[] }).transactions).toHaveLength(1);
    // The API's own refusals come back as they are.
    const tooMuch = await browser.request("/api/wallet/transfer", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ toUserId: recipient.userId, amount: 1000 }) });
    await expectError(tooMuch, 422, "insufficient_funds");
  });

  it("refreshes an expired session once for concurrent calls, and every call gets through", async () => {
    const { browser } = await signedIn();
    const before = web.outbound.filter((c) => c.body.includes("grant_type=refresh_token")).length;
    clock.advance(11 * 60_000);
    const cookie = browser.header();
    const answers = await Promise.all(Array.from({ length: 5 }, () => web.app.request(`${ORIGIN}/api/wallet/overview`, { headers: { cookie } })));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(web.outbound.filter((c) => c.body.includes("grant_type=refresh_token")).length - before).toBe(1);
    // Each answer hands the browser the new session.
    for (const res of answers) expect(res.headers.getSetCookie().some((l) => l.startsWith("__Host-session=") && !/Max-Age=0/.test(l))).toBe(true);
  });

  it("answers 401 and clears the cookies when the refresh fails", async () => {
    const { browser } = await signedIn();
    // Signing out elsewhere revoked the refresh token this browser still holds.
    const stale = browser.header();
    expect((await browser.request("/api/auth/logout", { method: "POST", site: "same-origin" })).status).toBe(303);
    clock.advance(11 * 60_000);
    const res = await web.app.request(`${ORIGIN}/api/wallet/overview`, { headers: { cookie: stale } });
    await expectError(res.clone(), 401, "unauthorized");
    const cleared = res.headers.getSetCookie();
    expect(cleared).toEqual(expect.arrayContaining([expect.stringMatching(/^__Host-session=; .*Max-Age=0/), expect.stringMatching(/^__Host-refresh=; .*Max-Age=0/)]));
  });

  it("treats tampered or swapped cookies as no session", async () => {
    const { browser } = await signedIn();
    const session = browser.cookies.get("__Host-session") as string;
    const refresh = browser.cookies.get("__Host-refresh") as string;
    const flip = (v: string) => `${v.slice(0, 40)}${v[40] === "A" ? "B" : "A"}${v.slice(41)}`;
    for (const cookie of [`__Host-session=${flip(session)}`, `__Host-session=${refresh}`, `__Host-refresh=${flip(refresh)}`, `__Host-refresh=${session}`]) {
      await expectError(await web.app.request(`${ORIGIN}/api/wallet/overview`, { headers: { cookie } }), 401, "unauthorized");
    }
  });

  it("streams the agent's answer with the session's token, without the browser's cookies", async () => {
    const { browser } = await signedIn();
    const res = await browser.request("/api/agent", { method: "POST", site: "same-origin", headers: { "content-type": "application/json" }, body: JSON.stringify({ message: "hi" }) });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(await res.text()).toContain("the agent");
    const seen = agent.calls.at(-1);
    expect(seen?.authorization).toMatch(/^Bearer ey/);
    expect(seen?.cookie).toBeUndefined();
  });
});

describe("cross-site requests", () => {
  it.each([
    ["another Origin", { origin: "https://evil.example" }],
    ["Sec-Fetch-Site cross-site", { "sec-fetch-site": "cross-site", origin: "https://evil.example" }],
    ["Sec-Fetch-Site same-site", { "sec-fetch-site": "same-site", origin: "https://sub.web.example.test" }],
    ["neither header", {}],
  ])("refuses %s on every state-changing route", async (_what, headers) => {
    const { browser } = await signedIn();
    const before = agent.calls.length;
    for (const path of ["/api/wallet/transfer", "/api/agent", "/api/auth/logout"]) {
      const res = await web.app.request(`${ORIGIN}${path}`, { method: "POST", headers: { ...headers, cookie: browser.header(), "content-type": "application/json" }, body: "{}" });
      await expectError(res, 403, "forbidden");
    }
    expect(agent.calls.length).toBe(before);
    // Still signed in: the refused logout did nothing.
    expect((await browser.request("/api/wallet/overview")).status).toBe(200);
  });
});

describe("logout", () => {
  it("clears both cookies, revokes the refresh token and sends the browser to the issuer's end_session_endpoint", async () => {
    const { browser } = await signedIn();
    const revokedBefore = provider.revoked.length;
    const res = await browser.request("/api/auth/logout", { method: "POST", site: "same-origin" });
    expect(res.status).toBe(303);
    const location = new URL(res.headers.get("location") as string);
    expect(location.origin).toBe(provider.issuer);
    expect(location.searchParams.get("post_logout_redirect_uri")).toBe(`${ORIGIN}/`);
    expect(location.searchParams.get("id_token_hint")).toMatch(/^ey/);
    expect(browser.cookies.size).toBe(0);
    expect(provider.revoked.length).toBe(revokedBefore + 1);
  });
});

describe("the page", () => {
  it("offers sign-in when signed out, with the security headers and a nonce for its own script only", async () => {
    const res = await new Browser(web.app, ORIGIN).request("/");
    expect(res.status).toBe(200);
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toMatch(/script-src 'nonce-[A-Za-z0-9_-]{20,}'/);
    expect(csp).not.toContain("unsafe-inline");
    expect(res.headers.get("strict-transport-security")).toMatch(/max-age=\d+/);
    expect(res.headers.get("referrer-policy")).toBe("same-origin");
    expect(await res.text()).toContain('href="/api/auth/login?returnTo=%2F"');
  });

  it("shows the wallet to a signed-in member, with the script carrying this answer's nonce", async () => {
    const { browser } = await signedIn();
    const res = await browser.request("/");
    const nonce = /'nonce-([^']+)'/.exec(res.headers.get("content-security-policy") ?? "")?.[1];
    const html = await res.text();
    expect(html).toContain(`<script nonce="${nonce}">`);
    expect(html).toContain('<label for="amount">');
    expect(html).toContain('action="/api/auth/logout"');
  });
});
