import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { API_NODE_ARGS, buildApi } from "../../bench/lib/servers";
import { useTestDatabase } from "../support/environment";
import { followAuthorization } from "../support/oidc-provider";
import { freePort, runNode, startListening, type TsProcess } from "../support/process";
import { randomSuffix } from "../support/services";

/** The entry as `npm start` runs it: built once, then started with the same node arguments. */
beforeAll(buildApi, 60_000);
const env = useTestDatabase({ migrated: false });

async function waitForLine(proc: TsProcess, pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = pattern.exec(proc.output());
    if (found) return found;
    if (proc.child.exitCode !== null || Date.now() > deadline) throw new Error(`no line matching ${pattern}: ${proc.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The cookies a response sets, as name → value (a cleared cookie maps to ""). */
function setCookies(res: Response): Map<string, string> {
  return new Map(res.headers.getSetCookie().map((line) => {
    const pair = line.split(";")[0] ?? "";
    const eq = pair.indexOf("=");
    return [pair.slice(0, eq), pair.slice(eq + 1)] as [string, string];
  }));
}

describe("npm start with no identity provider configured", () => {
  it("serves the web app, prints its URL, and a member signs in with the code flow at the development issuer", { timeout: 90_000 }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "web-entry-"));
    // Three ports: the API's, the web app's and the development issuer's at PORT+2, none of them held
    // for the server until it listens on it.
    const { proc, port, webPort } = await startListening(async () => {
      const [port, webPort] = [await freePort(), await freePort()];
      return { port, webPort, proc: runNode(API_NODE_ARGS, { DATABASE_URL: env.db.url, DATA_DIR: dataDir, PORT: String(port), WEB_PORT: String(webPort), LOG_LEVEL: "info" }) };
    }, (proc) => proc.output().includes('"msg":"web app listening"') && proc.output().includes('"msg":"listening"'), 60_000);
    try {
      const [, webUrl] = await waitForLine(proc, /"msg":"web app listening","url":"([^"]+)"/, 60_000);
      await waitForLine(proc, /"msg":"listening"/, 60_000);
      expect(webUrl).toBe(`http://127.0.0.1:${webPort}`);
      expect(proc.output()).toContain(`"issuer":"http://127.0.0.1:${port + 2}"`);

      const page = await fetch(`${webUrl}/`);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain("<html");

      const login = await fetch(`${webUrl}/api/auth/login`, { redirect: "manual" });
      expect(login.status).toBe(302);
      const authorization = new URL(login.headers.get("location") as string);
      expect(authorization.origin).toBe(`http://127.0.0.1:${port + 2}`);
      expect(authorization.searchParams.get("code_challenge_method")).toBe("S256");
      const signin = setCookies(login).get("signin") as string;
      expect(signin).toBeTruthy();

      const member = `newcomer-${randomSuffix()}`;
      const callback = await followAuthorization(authorization.href, member, `${webUrl}/api/auth/callback`);
      expect(callback.searchParams.get("code"), callback.search).toBeTruthy();
      const landed = await fetch(`${webUrl}${callback.pathname}${callback.search}`, { redirect: "manual", headers: { cookie: `signin=${signin}` } });
      expect(landed.status).toBe(302);
      const session = setCookies(landed);
      expect(session.get("session")).toBeTruthy();
      expect(session.get("refresh")).toBeTruthy();

      // The API behind it accepts the development issuer's token: the wallet answers for this member.
      const overview = await fetch(`${webUrl}/api/wallet/overview`, { headers: { cookie: `session=${session.get("session")}; refresh=${session.get("refresh")}` } });
      expect(overview.status).toBe(200);
      expect(await overview.json()).toHaveProperty("balance");
    } finally {
      proc.child.kill("SIGTERM");
      await proc.exited;
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
