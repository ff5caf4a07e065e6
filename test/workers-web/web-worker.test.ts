import { exports } from "cloudflare:workers";
import { describe, expect, inject, it } from "vitest";
import { followAuthorization } from "../support/oidc-interactions";

// The web Worker (wrangler.web.toml) in workerd, as deployed: its page, its sign-in against a real
// OpenID Connect provider reached over loopback http, its cross-site refusals, and the wallet
// answered by the API Worker running in the same workerd behind the `API` service binding (with
// its own bindings: the Neon driver to the real Postgres, tokens checked against the same issuer).

const web = exports.default;
const ORIGIN = inject("webOrigin");
const ISSUER = inject("webIssuerUrl");
const CALLBACK = `${ORIGIN}/api/auth/callback`;

/** One browser's cookies for the web app's origin; names are unique. */
class Browser {
  readonly cookies = new Map<string, string>();
  readonly lines: string[] = [];

  async request(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size > 0) headers.set("cookie", [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; "));
    const res = await web.fetch(new Request(new URL(path, ORIGIN), { ...init, headers, redirect: "manual" }));
    for (const line of res.headers.getSetCookie()) {
      this.lines.push(line);
      const pair = line.split(";")[0] ?? "";
      const name = pair.slice(0, pair.indexOf("="));
      const value = pair.slice(pair.indexOf("=") + 1);
      if (value === "" || /max-age=0/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return res;
  }

  line(name: string): string {
    return this.lines.filter((l) => l.startsWith(`${name}=`)).at(-1) ?? "";
  }
}

async function authorizationEndpoint(): Promise<string> {
  const res = await fetch(`${ISSUER}/.well-known/openid-configuration`);
  return ((await res.json()) as { authorization_endpoint: string }).authorization_endpoint;
}

/** Signs a new member in through the issuer's login form; the browser then holds the session cookies. */
async function signedIn(returnTo = "/"): Promise<{ browser: Browser; landed: Response }> {
  const browser = new Browser();
  const login = await browser.request(`/api/auth/login?returnTo=${encodeURIComponent(returnTo)}`);
  expect(login.status).toBe(302);
  const callback = await followAuthorization(login.headers.get("location") as string, `workerd-member-${crypto.randomUUID()}`, CALLBACK);
  const landed = await browser.request(callback.pathname + callback.search);
  return { browser, landed };
}

describe("the web Worker in workerd", () => {
  it("renders the page with the security headers", async () => {
    const res = await new Browser().request("/");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    const csp = res.headers.get("content-security-policy") ?? "";
    const nonce = /style-src 'nonce-([^']+)'/.exec(csp)?.[1];
    expect(nonce).toMatch(/^[A-Za-z0-9_-]{16,}$/);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("default-src 'none'");
    expect(res.headers.get("strict-transport-security")).toMatch(/^max-age=\d+/);
    expect(res.headers.get("referrer-policy")).toBe("same-origin");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    const html = await res.text();
    expect(html).toMatch(/^<!doctype html>/i);
    expect(html).toContain(`<style nonce="${nonce}">`);
    expect(html).toContain('href="/api/auth/login?returnTo=%2F"');
  });

  it("sends sign-in to the issuer's authorization endpoint with PKCE S256, state and nonce in a short-lived encrypted cookie", async () => {
    const browser = new Browser();
    const res = await browser.request("/api/auth/login");
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get("location") as string);
    expect(`${location.origin}${location.pathname}`).toBe(await authorizationEndpoint());
    const q = location.searchParams;
    expect(q.get("client_id")).toBe(inject("webClientId"));
    expect(q.get("redirect_uri")).toBe(CALLBACK);
    expect(q.get("response_type")).toBe("code");
    expect(q.get("code_challenge_method")).toBe("S256");
    expect(q.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(q.get("state")).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(q.get("nonce")).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(browser.line("__Host-signin")).toMatch(/; Max-Age=600; HttpOnly; SameSite=Lax; Secure$/);
    // A JWE: neither the state nor the PKCE verifier can be read from it.
    const value = browser.cookies.get("__Host-signin") as string;
    expect(value.split(".")).toHaveLength(5);
    expect(value).not.toContain(q.get("state"));
  });

  it.each([
    ["an Origin of another site", { origin: "https://evil.example" }],
    ["Sec-Fetch-Site cross-site", { origin: "https://evil.example", "sec-fetch-site": "cross-site" }],
  ])("refuses a POST with %s (403)", async (_what, headers) => {
    const { browser } = await signedIn();
    const transfer = await browser.request("/api/wallet/transfer", {
      method: "POST",
      headers: { ...headers, "content-type": "application/json", "idempotency-key": crypto.randomUUID() },
      body: JSON.stringify({ toUserId: "usr_anyone", amount: 1 }),
    });
    expect(transfer.status).toBe(403);
    expect(await transfer.json()).toMatchObject({ error: "forbidden" });
    const logout = await browser.request("/api/auth/logout", { method: "POST", headers });
    expect(logout.status).toBe(403);
    // Still signed in: the refused logout cleared nothing.
    expect(browser.cookies.has("__Host-session")).toBe(true);
  });

  it("answers the wallet from the API Worker behind the API service binding, with the session's token", async () => {
    const { browser, landed } = await signedIn("/wallet");
    expect(landed.status).toBe(302);
    expect(landed.headers.get("location")).toBe("/wallet");
    for (const name of ["__Host-session", "__Host-refresh"]) expect(browser.line(name)).toMatch(/; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Lax; Secure$/);

    const overview = await browser.request("/api/wallet/overview");
    expect(overview.status).toBe(200);
    expect(overview.headers.get("cache-control")).toBe("no-store");
    const wallet = (await overview.json()) as { userId: string; balance: number; tier: string };
    // The API created the member from the token on this first call, in its own database.
    expect(wallet).toMatchObject({ userId: expect.stringMatching(/^usr_/), balance: 0, tier: expect.any(String) });

    const history = await browser.request("/api/wallet/transactions?limit=5");
    expect(history.status).toBe(200);
    expect(await history.json()).toMatchObject({ transactions: [] });

    // A same-origin transfer goes on with its body; the API's refusal comes back as the API wrote it.
    const { browser: other } = await signedIn();
    const recipient = (await (await other.request("/api/wallet/overview")).json()) as { userId: string };
    const transfer = await browser.request("/api/wallet/transfer", {
      method: "POST",
      headers: { origin: ORIGIN, "sec-fetch-site": "same-origin", "content-type": "application/json", "idempotency-key": crypto.randomUUID() },
      body: JSON.stringify({ toUserId: recipient.userId, amount: 1 }),
    });
    expect(transfer.status).toBe(422);
    expect(await transfer.json()).toMatchObject({ error: "insufficient_funds" });

    // Without the session the web Worker does not call the API at all.
    const anonymous = await new Browser().request("/api/wallet/overview");
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toMatchObject({ error: "unauthorized" });
  });
});
