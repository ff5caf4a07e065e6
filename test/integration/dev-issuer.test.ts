import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decodeJwt, decodeProtectedHeader } from "jose";
import { afterAll, describe, expect, it } from "vitest";
import { TokenRejected } from "../../src/auth/tokens";
import { parseConfig, type Config } from "../../src/config";
import { DEV_AUDIENCE_DEFAULT, DEV_ISSUER, DevIssuerRefused, createDevVerifier, signDevToken } from "../../src/node/dev-issuer";
import { systemClock } from "../../src/platform/clock";
import { useTestDatabase } from "../support/environment";
import { freePort, runTs, startListening } from "../support/process";
import { randomSuffix } from "../support/services";

/**
 * The development issuer: `npm run token` signs with a key kept under DATA_DIR, and the Node
 * server without OIDC_ISSUER (outside production) trusts exactly that key.
 */

const tempDirs: string[] = [];
function tempDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "api-dev-issuer-"));
  tempDirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

const devConfig = (dataDir: string, env: Record<string, string> = {}): Config => parseConfig({ NODE_ENV: "development", DATA_DIR: dataDir, ...env });
const keyFile = (dataDir: string) => join(dataDir, "dev-issuer-key.json");
const newUser = (name = "dev") => `${name}-${randomSuffix()}`;

describe("signDevToken / createDevVerifier", () => {
  it("create the key file (mode 0600) on first use and round-trip a user token", async () => {
    const dataDir = join(tempDataDir(), "nested", "data");
    const config = devConfig(dataDir);
    const userId = newUser();
    const token = await signDevToken(config, { userId, admin: false });

    expect(existsSync(keyFile(dataDir))).toBe(true);
    expect(statSync(keyFile(dataDir)).mode & 0o777).toBe(0o600);
    expect(decodeProtectedHeader(token)).toMatchObject({ alg: "ES256", typ: "at+jwt" });
    expect(decodeJwt(token)).toMatchObject({ iss: DEV_ISSUER, aud: DEV_AUDIENCE_DEFAULT, sub: userId, roles: [] });

    const verifier = await createDevVerifier(config, systemClock);
    expect(verifier.issuer).toBe(DEV_ISSUER);
    expect(await verifier.verify(token)).toEqual({ subject: userId, email: `${userId}@dev.local`, roles: [], expiresAt: decodeJwt(token).exp! * 1000, issuedAt: decodeJwt(token).iat! * 1000 });
  });

  it("reuse the stored key on later calls; --admin puts admin in the roles claim", async () => {
    const dataDir = tempDataDir();
    const config = devConfig(dataDir);
    const first = await signDevToken(config, { userId: newUser(), admin: false });
    const stored = readFileSync(keyFile(dataDir), "utf8");

    const adminId = newUser("admin");
    const second = await signDevToken(config, { userId: adminId, admin: true });
    expect(readFileSync(keyFile(dataDir), "utf8")).toBe(stored);
    expect(decodeProtectedHeader(second).kid).toBe(decodeProtectedHeader(first).kid);
    expect(statSync(keyFile(dataDir)).mode & 0o777).toBe(0o600);

    const verifier = await createDevVerifier(config, systemClock);
    expect(readFileSync(keyFile(dataDir), "utf8")).toBe(stored);
    await expect(verifier.verify(first)).resolves.toMatchObject({ roles: [] });
    await expect(verifier.verify(second)).resolves.toEqual({ subject: adminId, email: `${adminId}@dev.local`, roles: ["admin"], expiresAt: decodeJwt(second).exp! * 1000, issuedAt: decodeJwt(second).iat! * 1000 });
  });

  it("honour a dotted OIDC_ROLES_CLAIM and OIDC_AUDIENCE on both sides", async () => {
    const config = devConfig(tempDataDir(), { OIDC_ROLES_CLAIM: "realm_access.roles", OIDC_AUDIENCE: "my-local-api" });
    const token = await signDevToken(config, { userId: newUser(), admin: true });
    expect(decodeJwt(token)).toMatchObject({ aud: "my-local-api", realm_access: { roles: ["admin"] } });
    await expect((await createDevVerifier(config, systemClock)).verify(token)).resolves.toMatchObject({ roles: ["admin"] });
  });

  it("a verifier trusts only its own DATA_DIR's key, its audience and unexpired tokens", async () => {
    const mine = devConfig(tempDataDir());
    const verifier = await createDevVerifier(mine, systemClock);
    const foreign = await signDevToken(devConfig(tempDataDir()), { userId: newUser(), admin: true });
    await expect(verifier.verify(foreign)).rejects.toBeInstanceOf(TokenRejected);

    const otherAudience = await signDevToken(devConfig(mine.DATA_DIR, { OIDC_AUDIENCE: "another-api" }), { userId: newUser(), admin: false });
    await expect(verifier.verify(otherAudience)).rejects.toThrow(/aud/);

    const expired = await signDevToken(mine, { userId: newUser(), admin: false, ttlSeconds: -60 });
    await expect(verifier.verify(expired)).rejects.toThrow(/exp/);
  });

  it("refuse with NODE_ENV=production, and write no key", async () => {
    const dataDir = tempDataDir();
    // parseConfig itself refuses production without OIDC_ISSUER; this is the guard behind it.
    const production: Config = { ...devConfig(dataDir), NODE_ENV: "production" };
    await expect(signDevToken(production, { userId: newUser(), admin: true })).rejects.toBeInstanceOf(DevIssuerRefused);
    await expect(createDevVerifier(production, systemClock)).rejects.toBeInstanceOf(DevIssuerRefused);
    await expect(createDevVerifier(production, systemClock)).rejects.toThrow(/production/);
    expect(existsSync(keyFile(dataDir))).toBe(false);
  });

  it("refuse when OIDC_ISSUER is set, and write no key", async () => {
    const dataDir = tempDataDir();
    const withIssuer = devConfig(dataDir, { OIDC_ISSUER: "https://idp.example.test", OIDC_AUDIENCE: "platform-api" });
    await expect(signDevToken(withIssuer, { userId: newUser(), admin: false })).rejects.toBeInstanceOf(DevIssuerRefused);
    await expect(createDevVerifier(withIssuer, systemClock)).rejects.toThrow(/OIDC_ISSUER/);
    expect(existsSync(keyFile(dataDir))).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------
// End to end: the token CLI and the Node entry as separate processes sharing one DATA_DIR.

/** `npm run token -- <userId> [--admin]` without npm's banner: the script it runs. */
async function tokenCli(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const proc = runTs("src/node/token-cli.ts", args, env);
  const code = await proc.exited;
  return { code, stdout: proc.stdout(), stderr: proc.stderr() };
}

describe("npm run token + npm start without OIDC_ISSUER", () => {
  const env = useTestDatabase({ migrated: false });

  // Three TypeScript processes start one after another (two CLI runs, then the server), each
  // compiling the entry on start: on a loaded machine that alone takes most of a minute.
  it("a CLI token for an admin and one for a user authenticate against the Node server", { timeout: 150_000 }, async () => {
    const dataDir = tempDataDir();
    const admin = newUser("alice");
    const user = newUser("bob");
    const adminCli = await tokenCli([admin, "--admin"], { DATA_DIR: dataDir });
    expect(adminCli.code).toBe(0);
    const adminToken = adminCli.stdout.trim();
    expect(adminToken).toMatch(/^eyJ[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(statSync(keyFile(dataDir)).mode & 0o777).toBe(0o600);
    const userCli = await tokenCli([user], { DATA_DIR: dataDir });
    expect(userCli.code).toBe(0);

    // WEB_PORT=0: no web app, which would take its fixed port 8788 and the development issuer PORT+2,
    // ports no test has made sure of.
    const { proc: server, port } = await startListening(async () => {
      const port = await freePort();
      return { port, proc: runTs("src/node/main.ts", [], { DATA_DIR: dataDir, DATABASE_URL: env.db.url, PORT: String(port), WEB_PORT: "0", LOG_LEVEL: "info" }) };
    }, (proc) => proc.stdout().includes('"msg":"listening"'), 90_000);
    try {
      const call = (token: string) => fetch(`http://127.0.0.1:${port}/v1/auth/test`, { headers: { authorization: `Bearer ${token}` } });

      const asAdmin = await call(adminToken);
      expect(asAdmin.status).toBe(200);
      expect(await asAdmin.json()).toMatchObject({
        success: true,
        user: { id: expect.stringMatching(/^usr_/), email: `${admin}@dev.local`, role: "admin", permissions: ["read", "write", "admin"] },
      });

      const asUser = await call(userCli.stdout.trim());
      expect(asUser.status).toBe(200);
      expect(await asUser.json()).toMatchObject({ user: { email: `${user}@dev.local`, role: "user" } });

      // A development token made with another DATA_DIR's key is not trusted.
      const foreign = await signDevToken(devConfig(tempDataDir()), { userId: newUser("mallory"), admin: true });
      const refused = await call(foreign);
      expect(refused.status).toBe(401);
      expect(await refused.json()).toMatchObject({ error: "unauthorized", message: "invalid or missing key", code: 401 });

      // The start-up warning says the development issuer is trusted (the "listening" line after it
      // has arrived: the start waited for it).
      const lines = server
        .stdout()
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l) as { level: string; msg: string });
      expect(lines).toContainEqual(expect.objectContaining({ level: "warn", msg: expect.stringMatching(/OIDC_ISSUER is not set.*development issuer/) }));
      expect(lines.findIndex((l) => /development issuer/.test(l.msg))).toBeLessThan(lines.findIndex((l) => l.msg === "listening"));
    } finally {
      server.child.kill("SIGTERM");
      const code = await Promise.race([server.exited, new Promise<"timeout">((r) => setTimeout(() => r("timeout"), 10_000))]);
      if (code === "timeout") server.child.kill("SIGKILL");
    }
  });

  it("the token CLI refuses with NODE_ENV=production (exit 1, a message naming the cause, no token)", { timeout: 30_000 }, async () => {
    const dataDir = tempDataDir();
    const cli = await tokenCli([newUser("alice"), "--admin"], { DATA_DIR: dataDir, NODE_ENV: "production" });
    expect(cli.code).toBe(1);
    expect(cli.stdout).toBe("");
    expect(cli.stderr).toMatch(/cannot issue a development token: .*OIDC_ISSUER/);
    expect(existsSync(keyFile(dataDir))).toBe(false);
  });

  it("the token CLI refuses when OIDC_ISSUER is set, and shows usage without a user id", { timeout: 30_000 }, async () => {
    const dataDir = tempDataDir();
    const [withIssuer, noUser] = await Promise.all([
      tokenCli([newUser("alice")], { DATA_DIR: dataDir, OIDC_ISSUER: "https://idp.example.test", OIDC_AUDIENCE: "platform-api" }),
      tokenCli(["--admin"], { DATA_DIR: dataDir }),
    ]);
    expect(withIssuer.code).toBe(1);
    expect(withIssuer.stdout).toBe("");
    expect(withIssuer.stderr).toContain("cannot issue a development token: OIDC_ISSUER is set");
    expect(noUser.code).toBe(2);
    expect(noUser.stderr).toContain("usage: npm run token -- <userId> [--admin]");
    expect(existsSync(keyFile(dataDir))).toBe(false);
  });
});
