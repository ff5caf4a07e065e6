import { describe, expect, it } from "vitest";
import { cookieHeader, cookieSettings, deriveCookieKeys, seal } from "../../src/web/cookies";
import { parseWebConfig } from "../../src/web/config";
import { createWebLogger } from "../../src/web/logger";

const hex = (bytes: number) => Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, "0")).join("");
// Neither secret has a shape the redactor knows: only their configured values can find them.
const COOKIE_SECRET = `cookie secret of no shape ${hex(4)} / ${hex(4)} + more words`;
const CLIENT_SECRET = `client-secret.${hex(5)}~Zq`;

function webLogger(): { lines: string[]; logger: ReturnType<typeof createWebLogger> } {
  const config = parseWebConfig({ NODE_ENV: "test", WEB_ORIGIN: "https://web.example.test", WEB_COOKIE_SECRET: COOKIE_SECRET, OIDC_ISSUER: "https://id.example.test", OIDC_CLIENT_ID: "web", OIDC_CLIENT_SECRET: CLIENT_SECRET });
  const lines: string[] = [];
  return { lines, logger: createWebLogger(config, { sink: (l) => lines.push(l), extraSecrets: ["api-side-secret-value"] }) };
}

describe("the web app's log", () => {
  it("never holds WEB_COOKIE_SECRET or OIDC_CLIENT_SECRET, in the message, a field or an error", () => {
    const { lines, logger } = webLogger();
    logger.error(`token endpoint refused client_secret ${CLIENT_SECRET} (key ${COOKIE_SECRET})`, {
      reason: `invalid_client: ${CLIENT_SECRET}`,
      nested: { list: [COOKIE_SECRET, `prefix${CLIENT_SECRET}suffix`] },
      error: { message: `failed with ${COOKIE_SECRET}`, stack: `Error: ${CLIENT_SECRET}\n    at x` },
      api: "api-side-secret-value",
    });
    const text = lines.join("\n");
    expect(text).toContain("token endpoint refused");
    for (const secret of [COOKIE_SECRET, CLIENT_SECRET, "api-side-secret-value"]) expect(text).not.toContain(secret);
    expect(text.match(/\[redacted\]/g)?.length).toBeGreaterThanOrEqual(8);
  });

  it("never holds the session, refresh or sign-in cookie's value, quoted as a Cookie or Set-Cookie line", async () => {
    const { lines, logger } = webLogger();
    const keys = await deriveCookieKeys(COOKIE_SECRET);
    const now = Date.now();
    const session = await seal(keys.session, { at: "opaque-access-token", exp_at: now + 60_000 }, now, 60);
    const refresh = await seal(keys.refresh, { rt: "opaque-refresh-token" }, now, 600);
    const signin = await seal(keys.signin, { v: "verifier" }, now, 600);
    const settings = cookieSettings("https://web.example.test");
    const loopback = cookieSettings("http://127.0.0.1:8788");
    logger.warn(`upstream echoed cookie: __Host-session=${session}; __Host-refresh=${refresh}; __Host-signin=${signin}`);
    logger.info("answer", { setCookie: cookieHeader(settings, "session", session, 60), line: cookieHeader(loopback, "refresh", refresh, 600), also: `signin=${signin}` });
    // A plain (non-JWE) value of the loopback names is found by its name as well.
    logger.info("plain", { line: "session=not-a-jwe-value; refresh=another.plain.value" });
    const text = lines.join("\n");
    for (const value of [session, refresh, signin, session.slice(-24), refresh.slice(-24), "not-a-jwe-value", "another.plain.value"]) expect(text).not.toContain(value);
    expect(text).toContain("__Host-session=[redacted]");
    expect(text).toContain("session=[redacted]");
  });

  it("drops a PKCE verifier quoted in a form body", () => {
    const { lines, logger } = webLogger();
    logger.info(`posted grant_type=authorization_code&code_verifier=abcDEF123-_xyz&client_id=web`);
    expect(lines.join("\n")).toContain("code_verifier=[redacted]&client_id=web");
  });
});
