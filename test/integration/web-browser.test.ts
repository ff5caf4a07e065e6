import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import type { AddressInfo } from "node:net";
import { serve, type ServerType } from "@hono/node-server";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildTestApp, type TestApp } from "../support/app";
import { createTestDatabase, type TestDatabase } from "../support/database";
import { startFakePlatformAgent, type FakePlatformAgent } from "../support/fake-platform-agent";
import { startOidcProvider, type OidcProviderHandle } from "../support/oidc-provider";
import { ENTERPRISE } from "../support/people";
import { randomSuffix } from "../support/services";
import { buildTestWeb, type TestWeb } from "../support/web";

/**
 * The member's page in Debian's Chromium (playwright-core), against the real web app, the real API
 * and oidc-provider's own login and consent pages. Screenshots of every step go to
 * test-output/web-browser/ (ignored by git).
 */
const SHOTS = resolve("test-output/web-browser");
const AUDIENCE = "https://api.browser-test.example";
const CLIENT_ID = "web-app-browser";
const CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"];

let provider: OidcProviderHandle;
let db: TestDatabase;
let agent: FakePlatformAgent;
let api: TestApp;
let web: TestWeb;
let apiServer: ServerType;
let webServer: ServerType;
let origin: string;
let browser: Browser;
/** How far the web app's clock runs ahead: moved to make the session's access token expire. */
let ahead = 0;

const listen = async (fetch: (req: Request) => Response | Promise<Response>): Promise<ServerType> => {
  const server = serve({ fetch, port: 0, hostname: "127.0.0.1" });
  await new Promise<void>((done) => server.once("listening", () => done()));
  return server;
};
const close = (s: ServerType | undefined) => new Promise<void>((done) => (s ? s.close(() => done()) : done()));

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  // The web app's server listens first, on a port of its own for good: the provider must know the
  // app's origin, and a port only picked (freePort) could be taken while Chromium starts.
  let webFetch: (req: Request) => Response | Promise<Response> = () => new Response("starting", { status: 503 });
  webServer = await listen((req) => webFetch(req));
  origin = `http://127.0.0.1:${(webServer.address() as AddressInfo).port}`;
  [provider, db, agent, browser] = await Promise.all([
    startOidcProvider({ audience: AUDIENCE, webClient: { clientId: CLIENT_ID, redirectUri: `${origin}/api/auth/callback`, postLogoutRedirectUri: `${origin}/` } }),
    createTestDatabase(),
    startFakePlatformAgent(),
    chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_FLAGS }),
  ]);
  api = buildTestApp({ database: db.database, tierLookup: ENTERPRISE, env: { OIDC_ISSUER: provider.issuer, OIDC_AUDIENCE: AUDIENCE } });
  apiServer = await listen(api.app.fetch);
  const apiUrl = `http://127.0.0.1:${(apiServer.address() as AddressInfo).port}`;
  web = await buildTestWeb({
    clock: { now: () => Date.now() + ahead },
    api: (path, init) => fetch(`${apiUrl}${path}`, init),
    env: { WEB_ORIGIN: origin, OIDC_ISSUER: provider.issuer, OIDC_CLIENT_ID: CLIENT_ID, PLATFORM_AGENT_URL: agent.url, API_URL: apiUrl },
  });
  webFetch = web.app.fetch;
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await Promise.all([close(webServer), close(apiServer)]);
  await Promise.all([provider?.close(), db?.drop(), agent?.close()]);
});

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: resolve(SHOTS, `${name}.png`), fullPage: true });
}

/** A member's user id on the API (created by their first call there). */
async function userIdOf(account: string, roles: string[] = []): Promise<{ id: string; token: string }> {
  const token = await provider.login(account, { roles });
  const res = await api.app.request("/v1/auth/test", { headers: { authorization: `Bearer ${token}` } });
  return { id: ((await res.json()) as { user: { id: string } }).user.id, token };
}

describe("the member's page in a browser", () => {
  it("signs in through the issuer's form, shows the balance, transfers, survives an expired token, streams the assistant and signs out", async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const page = await context.newPage();
    const member = `browser-${randomSuffix()}`;
    provider.setAccount(member, {});

    await page.goto(`${origin}/`);
    await shot(page, "1-signed-out");
    await page.getByRole("link", { name: "Sign in" }).click();

    // oidc-provider's own login page, then its consent page.
    await page.locator('input[name="login"]').fill(member);
    await page.locator('input[name="password"]').fill("any-password");
    await shot(page, "2-issuer-login");
    await page.locator('button[type="submit"]').first().click();
    await page.locator('button[type="submit"]').first().click();

    await page.waitForURL(`${origin}/`);
    await expect.poll(() => page.locator("#balance").textContent(), { timeout: 10_000 }).toBe("0");
    // Cookies are per host, not per port: the issuer's own (on the same loopback host) are left out.
    const cookies = (await context.cookies(origin)).filter((c) => c.name === "session" || c.name === "refresh");
    expect(cookies.map((c) => c.name).sort()).toEqual(["refresh", "session"]);
    expect(cookies.every((c) => c.httpOnly && c.sameSite === "Lax")).toBe(true);
    await shot(page, "3-signed-in");

    // Coins from an admin, a recipient, then the transfer through the form.
    const self = (await (await page.request.get(`${origin}/api/wallet/overview`)).json()) as { userId: string };
    const admin = await userIdOf(`admin-${randomSuffix()}`, ["admin"]);
    const award = await api.app.request("/api/v1/wallet/coins/award", { method: "POST", headers: { authorization: `Bearer ${admin.token}`, "content-type": "application/json" }, body: JSON.stringify({ userId: self.userId, amount: 120, reason: "browser test" }) });
    expect(award.status).toBe(200);
    const recipient = await userIdOf(`recipient-${randomSuffix()}`);
    await page.reload();
    await expect.poll(() => page.locator("#balance").textContent(), { timeout: 10_000 }).toBe("120");
    await page.getByLabel("Recipient's user id").fill(recipient.id);
    await page.getByLabel("Amount (coins)").fill("25");
    await page.getByRole("button", { name: "Send" }).click();
    await expect.poll(() => page.locator("#transfer-result").textContent(), { timeout: 10_000 }).toContain("Sent 25 coins");
    await expect.poll(() => page.locator("#balance").textContent(), { timeout: 10_000 }).toBe("95");
    await shot(page, "4-transferred");

    // An error is shown, not swallowed.
    await page.getByLabel("Recipient's user id").fill(recipient.id);
    await page.getByLabel("Amount (coins)").fill("5000");
    await page.getByRole("button", { name: "Send" }).click();
    await expect.poll(() => page.locator("#transfer-result").textContent(), { timeout: 10_000 }).toContain("not enough coins");
    await shot(page, "5-transfer-refused");

    // The access token expires (the web app's clock moves past it): the next calls refresh it.
    const refreshesBefore = web.outbound.filter((c) => c.body.includes("grant_type=refresh_token")).length;
    ahead += 11 * 60_000;
    await page.reload();
    await expect.poll(() => page.locator("#balance").textContent(), { timeout: 10_000 }).toBe("95");
    expect(web.outbound.filter((c) => c.body.includes("grant_type=refresh_token")).length - refreshesBefore).toBe(1);
    await shot(page, "6-after-expiry");

    // The assistant's answer streams in from the (loopback) platform agent.
    await page.getByLabel("Your question").fill("How do coins work?");
    await page.getByRole("button", { name: "Ask" }).click();
    await expect.poll(() => page.locator("#answer").textContent(), { timeout: 10_000 }).toBe("Hello from the agent");
    expect(agent.calls.at(-1)?.authorization).toMatch(/^Bearer ey/);
    await shot(page, "7-assistant");

    // Sign out: the issuer asks to confirm, then sends the browser back to the page.
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL((url) => url.origin === provider.issuer);
    await shot(page, "8-issuer-logout");
    await page.locator('button[value="yes"]').click();
    await page.waitForURL(`${origin}/`);
    await expect(page.getByRole("link", { name: "Sign in" })).toBeDefined();
    expect(await page.getByRole("link", { name: "Sign in" }).count()).toBe(1);
    expect((await context.cookies(origin)).filter((c) => c.name === "session" || c.name === "refresh")).toEqual([]);
    await shot(page, "9-signed-out-again");
    await context.close();
  }, 90_000);
});
