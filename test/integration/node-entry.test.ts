import { beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "../support/environment";
import { freePort, runNode, startListening } from "../support/process";
import { TEST_REDIS_URL } from "../support/services";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { API_NODE_ARGS, buildApi } from "../../bench/lib/servers";
import { request as httpRequest } from "node:http";
import { startTestIssuer } from "../support/issuer";
import { startUpstashRestServer } from "../support/upstash-rest-server";
import { checkReferencePage } from "../support/reference-page";

/** The entry as `npm start` runs it: built once, then started with the same node arguments. */
const run = (env: Record<string, string>) => runNode(API_NODE_ARGS, env);
beforeAll(buildApi, 60_000);

/**
 * The entry started on a port of its own, once it says it listens (its log line, not an answer on
 * the port: another process may hold that port when the server could not take it).
 */
const start = (env: (port: number) => Record<string, string>, timeoutMs = 30_000) =>
  startListening(async () => {
    const port = await freePort();
    return { port, proc: run(env(port)) };
  }, (proc) => proc.stdout().includes('"msg":"listening"'), timeoutMs);

describe("the Node entry (npm start)", () => {
  it("is started by the benches with the same node arguments as npm start", () => {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { scripts: Record<string, string> };
    expect(pkg.scripts.start).toBe(`npm run -s build && node ${API_NODE_ARGS.join(" ")}`);
  });

  const env = useTestDatabase({ migrated: false });

  it("refuses to start on a malformed variable and names it", async () => {
    const proc = run({ DATABASE_URL: "mysql://nope", PORT: "not-a-port" });
    expect(await proc.exited).toBe(1);
    expect(proc.output()).toContain("DATABASE_URL");
    expect(proc.output()).toContain("PORT");
  });

  it("refuses to start in production without an identity provider", async () => {
    const proc = run({ NODE_ENV: "production" });
    expect(await proc.exited).toBe(1);
    expect(proc.output()).toContain("OIDC_ISSUER");
  });

  it("refuses to start, in one line, when its port is taken", { timeout: 40_000 }, async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const { port } = taken.address() as AddressInfo;
    try {
      const proc = run({ DATABASE_URL: env.db.url, PORT: String(port), LOG_LEVEL: "silent" });
      expect(await proc.exited).toBe(1);
      expect(proc.output()).toContain('"msg":"startup failed"');
      expect(proc.output()).toContain(`cannot listen on 127.0.0.1:${port}: EADDRINUSE`);
      expect(proc.output()).not.toMatch(/^\s+at /m);
    } finally {
      taken.close();
    }
  });

  it("refuses a second server on the same embedded DATA_DIR, naming the first", { timeout: 60_000 }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "api-entry-"));
    // WEB_PORT=0: no web app, which would take its fixed port 8788 and the development issuer
    // PORT+2, ports no test has made sure of.
    const { proc: first, port } = await start((port) => ({ DATA_DIR: dataDir, PORT: String(port), WEB_PORT: "0", LOG_LEVEL: "info" }), 45_000);
    try {
      expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
      const second = run({ DATA_DIR: dataDir, PORT: String(await freePort()), LOG_LEVEL: "silent" });
      expect(await second.exited).toBe(1);
      expect(second.output()).toContain(`is in use by process ${first.child.pid}`);
      // The first server is untouched by the attempt.
      expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
    } finally {
      first.child.kill("SIGKILL");
      await first.exited;
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("migrates an empty database, serves health on Postgres and Redis, and stops on SIGTERM", { timeout: 40_000 }, async () => {
    const { proc, port } = await start((port) => ({ DATABASE_URL: env.db.url, REDIS_URL: TEST_REDIS_URL, PORT: String(port), WEB_PORT: "0", LOG_LEVEL: "info" }));
    try {
      const res = await fetch(`http://127.0.0.1:${port}/health`);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ status: "ok", checks: { database: "ok", store: "ok" } });
      // The built entry finds the reference page's script from dist/, as the source does from src/.
      await checkReferencePage((path) => fetch(`http://127.0.0.1:${port}${path}`));
      proc.child.kill("SIGTERM");
      expect(await proc.exited).toBe(0);
      // Log lines are written in batches; a clean stop flushes them.
      expect(proc.output()).toContain('"msg":"migrations checked"');
    } finally {
      proc.child.kill("SIGKILL");
    }
  });

  it.each([
    { path: "the event hub (Redis)", store: "redis" as const },
    { path: "a polling stream (Upstash, no subscription)", store: "upstash" as const },
  ])("on SIGTERM ends an open event stream on $path cleanly, closes its connections and exits at once", { timeout: 40_000 }, async ({ store }) => {
    const issuer = await startTestIssuer();
    const upstash = store === "upstash" ? await startUpstashRestServer({ redisUrl: TEST_REDIS_URL, token: "node-entry-token" }) : undefined;
    const storeEnv: Record<string, string> = upstash ? { UPSTASH_REDIS_REST_URL: upstash.url, UPSTASH_REDIS_REST_TOKEN: "node-entry-token" } : { REDIS_URL: TEST_REDIS_URL };
    const { proc, port } = await start((port) => ({ DATABASE_URL: env.db.url, PORT: String(port), OIDC_ISSUER: issuer.url, OIDC_AUDIENCE: issuer.audience, KV_PREFIX: `entry-${store}-${port}:`, ...storeEnv }));
    try {
      const token = await issuer.sign({ sub: `node-entry-stream-${store}`, email: "stream@example.test" });
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/matches/events`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(200);
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let text = "";
      while (!text.includes(": connected")) text += decoder.decode((await reader.read()).value, { stream: true });

      const signalled = Date.now();
      proc.child.kill("SIGTERM");
      // The stream ends as a stream does (a fetch whose connection is cut fails with "terminated").
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
      expect(await proc.exited).toBe(0);
      // Well before the 5 s fallback, which exits without closing the pool and store or flushing the log.
      expect(Date.now() - signalled).toBeLessThan(3_000);
      expect(proc.output()).toContain('"msg":"shutting down"');
      expect(proc.output()).toContain('"msg":"stopped"');
    } finally {
      proc.child.kill("SIGKILL");
      await Promise.all([issuer.close(), upstash?.close()]);
    }
  });

  it("takes a POST or DELETE without a body as body-less over real HTTP, and still refuses an unframed type", { timeout: 40_000 }, async () => {
    const issuer = await startTestIssuer();
    const { proc, port } = await start((port) => ({ DATABASE_URL: env.db.url, PORT: String(port), OIDC_ISSUER: issuer.url, OIDC_AUDIENCE: issuer.audience }));
    try {
      const auth = { authorization: `Bearer ${await issuer.sign({ sub: "node-entry-bodies", email: "bodies@example.test" })}` };
      /** Raw node:http, so the framing headers are exactly the ones given. */
      const send = (method: string, path: string, headers: Record<string, string>, body?: string) =>
        new Promise<{ status: number; body: string }>((resolve, reject) => {
          const req = httpRequest({ host: "127.0.0.1", port, method, path, headers: { ...auth, ...headers } }, (res) => {
            let text = "";
            res.on("data", (chunk: Buffer) => (text += chunk.toString()));
            res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
          });
          req.on("error", reject);
          req.end(body);
        });
      // No framing header at all, and an explicit empty one: no body, so no Content-Type is needed.
      const unknownWink = await send("POST", "/api/v1/winks/wnk_00000000000000000000000000/accept", {});
      expect(unknownWink.status, unknownWink.body).toBe(404);
      const unblock = await send("DELETE", "/api/v1/blocks/usr_00000000000000000000000000", { "content-length": "0" });
      expect(unblock.status, unblock.body).not.toBe(400);
      expect(unblock.status).toBeLessThan(500);
      // A real body still has to say it is JSON, whether framed by length or chunked.
      const typeless = await send("POST", "/api/v1/blocks", { "content-length": "2" }, "{}");
      expect(typeless.status).toBe(400);
      expect(JSON.parse(typeless.body).message).toBe("Content-Type must be application/json");
      const chunked = await send("POST", "/api/v1/blocks", { "transfer-encoding": "chunked" }, "{}");
      expect(chunked.status).toBe(400);
      expect(JSON.parse(chunked.body).message).toBe("Content-Type must be application/json");
      // Methods no route takes are unknown paths, answered like any other: 404 in shape 1.
      for (const method of ["TRACE", "OPTIONS", "PROPFIND"]) {
        const odd = await send(method, "/api/v1/blocks", {});
        expect(odd.status, `${method} ${odd.body}`).toBe(404);
        expect(JSON.parse(odd.body)).toMatchObject({ error: "not_found", code: 404 });
      }
      // A path no route takes is answered before its body is read; the adapter drains the rest
      // (or closes the connection) and the server goes on answering.
      const large = await send("POST", "/nope", { "content-type": "application/json", "transfer-encoding": "chunked" }, "x".repeat(3 * 1024 * 1024));
      expect(large.status).toBe(404);
      expect(JSON.parse(large.body)).toMatchObject({ error: "not_found", code: 404 });
      expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
      // A request the adapter cannot make a URL of still gets shape 1 and a request id.
      for (const host of ["bad host^", "[::1", "a:99999999"]) {
        const res = await new Promise<{ status: number; body: string; id: string | undefined }>((resolve, reject) => {
          const req = httpRequest({ host: "127.0.0.1", port, path: "/health", headers: { host } }, (r) => {
            let text = "";
            r.on("data", (chunk: Buffer) => (text += chunk.toString()));
            r.on("end", () => resolve({ status: r.statusCode ?? 0, body: text, id: r.headers["x-request-id"] as string | undefined }));
          });
          req.on("error", reject);
          req.end();
        });
        expect(res.status, host).toBe(400);
        expect(JSON.parse(res.body)).toEqual({ error: "invalid_input", message: expect.stringMatching(/^malformed request: Invalid (host header|URL)$/), code: 400, requestId: res.id });
      }
    } finally {
      proc.child.kill("SIGKILL");
      await issuer.close();
    }
  });
});
