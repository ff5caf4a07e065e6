import { createServer as createHttpServer, type Server } from "node:http";
import { createServer as createTcpServer, type AddressInfo, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { buildTestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import type { TestIssuer } from "../support/issuer";
import { freePort } from "../support/process";
import { randomSuffix } from "../support/services";

/**
 * When the identity provider cannot hand over its keys, a valid token is not a bad token: the
 * answer is 503 (retry), not 401 (sign in again), it comes within the issuer timeout (5 s), and
 * the cause is logged as an error. Each provider here is a real server on loopback.
 */
const env = useTestEnvironment();

/** The app trusting `url` as its issuer; the tokens are signed by the suite's own issuer. */
const appTrusting = (url: string) => buildTestApp({ database: env.db.database, issuer: { ...env.issuer, url } as TestIssuer });
const token = () => env.issuer.sign({ sub: `user-${randomSuffix()}` });

async function expectIssuerDown(app: ReturnType<typeof appTrusting>): Promise<void> {
  const res = await app.request("/v1/auth/test", { headers: { authorization: `Bearer ${await token()}` } });
  expect(res.status).toBe(503);
  expect(await res.json()).toMatchObject({ error: "service_unavailable", code: 503 });
  expect(app.logs.some((l) => l.level === "error" && l.msg === "identity provider unavailable")).toBe(true);
}

async function listening<T extends Server | ReturnType<typeof createTcpServer>>(server: T): Promise<{ server: T; url: string }> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe("an identity provider that cannot be reached", () => {
  it("refusing connections: 503, not 401", async () => {
    await expectIssuerDown(appTrusting(`http://127.0.0.1:${await freePort()}`));
  });

  it("accepting connections and never answering: 503 within the 5 s timeout", { timeout: 15_000 }, async () => {
    const sockets: Socket[] = [];
    const { server, url } = await listening(createTcpServer((s) => sockets.push(s)));
    try {
      const started = Date.now();
      await expectIssuerDown(appTrusting(url));
      expect(Date.now() - started).toBeLessThan(8_000);
    } finally {
      for (const s of sockets) s.destroy();
      server.close();
    }
  });

  it("publishing a key set that fails (500): 503; once it answers again, tokens verify", async () => {
    let healthy = false;
    const { server, url } = await listening(
      createHttpServer((req, res) => {
        res.setHeader("content-type", "application/json");
        if (req.url === "/.well-known/openid-configuration") return res.end(JSON.stringify({ issuer: url, jwks_uri: `${url}/jwks` }));
        if (!healthy) return res.writeHead(500).end("{}");
        res.end(JSON.stringify({ keys: env.issuer.publicJwks() }));
      }),
    );
    try {
      const app = appTrusting(url);
      await expectIssuerDown(app);
      healthy = true;
      // The token's iss is the suite issuer's, not this one's: verifying the keys now works, and
      // the token is refused for its issuer like any other mismatch (401, not 503).
      const res = await app.request("/v1/auth/test", { headers: { authorization: `Bearer ${await token()}` } });
      expect(res.status).toBe(401);
    } finally {
      server.close();
    }
  });
});
