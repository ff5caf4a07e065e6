import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { sql } from "drizzle-orm";
import { createWorker, type WorkerEnv } from "../../workers/api";
import { createNeonDatabase } from "../../src/db/neon";
import { queryRows } from "../../src/db/rows";
import { RETENTION_TASKS } from "../../src/services/upkeep/retention";

const HOUR_MS = 3_600_000;

// These run inside workerd against the Worker built from wrangler.toml, with the bindings the
// project config sets: Neon driver → WebSocket proxy (global setup) → the local Postgres.
const worker = exports.default;

const MIB = 1024 * 1024;

interface StandardError {
  error: string;
  message: string;
  code: number;
  requestId: string;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("the Worker entry in workerd", () => {
  it("GET /health reaches Postgres through the Neon driver and answers 200", async () => {
    const res = await worker.fetch("http://api.test/health");
    const body = await res.json();
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({ status: "ok", checks: { database: "ok", store: "ok" } });
    expect(res.headers.get("cache-control")).toBe("no-store");
  });

  it("serves repeated requests from one cached app, each with its own database session", async () => {
    const responses = await Promise.all([1, 2, 3].map(() => worker.fetch("http://api.test/health")));
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200]);
    const ids = responses.map((r) => r.headers.get("x-request-id"));
    expect(new Set(ids).size).toBe(3);
    await Promise.all(responses.map((r) => r.body?.cancel()));
  });

  it("answers an unknown path 404 in shape 1 with an X-Request-Id header", async () => {
    const res = await worker.fetch("http://api.test/no/such/route");
    expect(res.status).toBe(404);
    const body = (await res.json()) as StandardError;
    expect(body).toEqual({ error: "not_found", message: expect.stringContaining("/no/such/route"), code: 404, requestId: expect.any(String) });
    expect(res.headers.get("x-request-id")).toBe(body.requestId);
  });

  it("keeps an incoming request id of our own shape", async () => {
    const res = await worker.fetch("http://api.test/missing", { headers: { "X-Request-Id": "req_01m8f4dt4reg5k6qxcfy7hxfra" } });
    expect(res.status).toBe(404);
    expect(((await res.json()) as StandardError).requestId).toBe("req_01m8f4dt4reg5k6qxcfy7hxfra");
    expect(res.headers.get("x-request-id")).toBe("req_01m8f4dt4reg5k6qxcfy7hxfra");
  });

  // A route's path: a path no route takes is 404 before any body rule.
  it("answers a body over 1 MiB with 413 payload_too_large in shape 1", async () => {
    const res = await worker.fetch("http://api.test/api/v1/wallet/transfer", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ blob: "x".repeat(MIB) }),
    });
    expect(res.status).toBe(413);
    const body = (await res.json()) as StandardError;
    expect(body).toEqual({ error: "payload_too_large", message: expect.any(String), code: 413, requestId: expect.any(String) });
    expect(res.headers.get("x-request-id")).toBe(body.requestId);
  });

  it("answers a streamed body over 1 MiB (no Content-Length) with 413 too", async () => {
    const chunk = new TextEncoder().encode("x".repeat(64 * 1024));
    // Exactly one byte over the limit, sent in pieces so no length is known up front.
    const pieces = [...Array.from({ length: MIB / chunk.length }, () => chunk), new Uint8Array([120])];
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = pieces.shift();
        if (next === undefined) controller.close();
        else controller.enqueue(next);
      },
    });
    const res = await worker.fetch("http://api.test/api/v1/wallet/transfer", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: stream,
    });
    expect(res.status).toBe(413);
    expect(((await res.json()) as StandardError).error).toBe("payload_too_large");
  });

  it("accepts a streamed body of exactly 1 MiB (the limit is inclusive)", async () => {
    const res = await worker.fetch("http://api.test/api/v1/wallet/transfer", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: new Blob([new Uint8Array(MIB).fill(120)]).stream(),
    });
    // Past the size check, the route's next rule refuses it: no credentials.
    expect(res.status).toBe(401);
    expect(((await res.json()) as StandardError).error).toBe("unauthorized");
  });

  it("serves the OpenAPI 3.1 document", async () => {
    const res = await worker.fetch("http://api.test/openapi.json");
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { openapi: string; paths: Record<string, unknown> };
    expect(doc.openapi).toBe("3.1.0");
    expect(Object.keys(doc.paths)).toContain("/health");
  });
});

async function call(handler: ReturnType<typeof createWorker>, bindings: WorkerEnv, path = "/health") {
  const ctx = createExecutionContext();
  const res = await handler.fetch(new Request(`http://api.test${path}`), bindings, ctx);
  await waitOnExecutionContext(ctx);
  return { res, body: (await res.json()) as StandardError & Record<string, unknown> };
}

describe("a Worker whose database is unreachable", () => {
  it("answers /health 503 with the database check down", async () => {
    // The proxy only tunnels to the test Postgres, so it refuses this port with 403 at once.
    const elsewhere = new URL(String(env.DATABASE_URL));
    elsewhere.port = "5433";
    const { res, body } = await call(createWorker(), { ...env, DATABASE_URL: elsewhere.toString() });
    expect(res.status).toBe(503);
    expect(body).toMatchObject({
      status: "unavailable",
      checks: { database: "down", store: "ok" },
      error: "service_unavailable",
      code: 503,
      requestId: res.headers.get("x-request-id"),
    });
  });
});

describe("a Worker with invalid configuration", () => {
  /** One request to a fresh Worker: its answer, and the variables its log line names. */
  async function boot(bindings: WorkerEnv, path = "/health") {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    // The tests' bindings keep the log silent; these read it.
    const { res, body } = await call(createWorker(), { ...bindings, LOG_LEVEL: bindings.LOG_LEVEL === "silent" ? "error" : bindings.LOG_LEVEL }, path);
    const lines = log.mock.calls.map(([line]) => JSON.parse(String(line)) as { level: string; msg: string; variables?: string[]; requestId?: string });
    log.mockRestore();
    return { res, body, variables: lines.find((l) => l.msg === "invalid configuration")?.variables };
  }

  it("answers every request 503 with the request id only, and logs the missing DATABASE_URL with that id", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    const handler = createWorker();
    const bindings: WorkerEnv = { ...env, DATABASE_URL: undefined, LOG_LEVEL: "error" };
    const ids: string[] = [];
    for (const path of ["/health", "/openapi.json", "/nowhere", "/v1/auth/test"]) {
      const { res, body } = await call(handler, bindings, path);
      expect(res.status).toBe(503);
      expect(body).toEqual({ error: "service_unavailable", message: "service unavailable", code: 503, requestId: expect.stringMatching(/^req_/) });
      expect(res.headers.get("x-request-id")).toBe(body.requestId);
      expect(JSON.stringify(body)).not.toContain("DATABASE_URL");
      ids.push(body.requestId);
    }
    const lines = log.mock.calls.map(([line]) => JSON.parse(String(line)) as { level: string; msg: string; variables?: string[]; requestId?: string });
    expect(lines).toEqual(ids.map((requestId) => expect.objectContaining({ level: "error", msg: "invalid configuration", variables: ["DATABASE_URL"], requestId })));
  });

  it("answers an AI route in the AI routes' shape, through the app's one error path", async () => {
    const { res, body } = await boot({ ...env, DATABASE_URL: undefined }, "/api/v1/ai-agents/health");
    expect(res.status).toBe(503);
    expect(body).toMatchObject({ success: false, error: { code: "service_unavailable", message: "service unavailable" }, requestId: res.headers.get("x-request-id") });
  });

  it("names a variable that fails validation", async () => {
    const { res, body, variables } = await boot({ ...env, DATABASE_URL: "mysql://db.example/app", LOG_LEVEL: "loud" });
    expect(res.status).toBe(503);
    expect(body.message).toBe("service unavailable");
    expect(variables).toEqual(["LOG_LEVEL", "DATABASE_URL"]);
  });

  it("names every bad variable at once: production (the wrangler.toml default) without OIDC_ISSUER or DATABASE_URL", async () => {
    const { res, variables } = await boot({ ...env, NODE_ENV: "production", NEON_INSECURE_WS: undefined, NEON_WS_PROXY: undefined, WEBHOOK_ALLOWED_HOSTS: undefined, DATABASE_URL: undefined });
    expect(res.status).toBe(503);
    expect(variables).toEqual(["OIDC_ISSUER", "DATABASE_URL", "UPSTASH_REDIS_REST_URL"]);
  });

  it("holds a Worker without NODE_ENV to the production rules", async () => {
    const { res, variables } = await boot({ ...env, NODE_ENV: undefined, NEON_INSECURE_WS: undefined, NEON_WS_PROXY: undefined, WEBHOOK_ALLOWED_HOSTS: undefined, DATABASE_URL: undefined });
    expect(res.status).toBe(503);
    expect(variables).toEqual(["OIDC_ISSUER", "DATABASE_URL", "UPSTASH_REDIS_REST_URL"]);
  });

  it("names the cross-variable rules along with a malformed one", async () => {
    const { variables } = await boot({ ...env, NODE_ENV: "production", NEON_INSECURE_WS: undefined, NEON_WS_PROXY: undefined, WEBHOOK_ALLOWED_HOSTS: undefined, LOG_LEVEL: "verbose", UPSTASH_REDIS_REST_URL: "https://kv.example" });
    expect(variables).toEqual(["LOG_LEVEL", "UPSTASH_REDIS_REST_TOKEN", "OIDC_ISSUER"]);
  });

  /** What production needs besides the database, so that one variable at a time can be at fault. */
  const PRODUCTION = {
    NODE_ENV: "production",
    WEBHOOK_ALLOWED_HOSTS: undefined,
    OIDC_ISSUER: "https://issuer.example",
    OIDC_AUDIENCE: "api",
    UPSTASH_REDIS_REST_URL: "https://kv.example",
    UPSTASH_REDIS_REST_TOKEN: "token",
  };

  it("refuses a malformed database proxy, and any proxy in production", async () => {
    const malformed = await boot({ ...env, NEON_WS_PROXY: "ws://127.0.0.1:5433" });
    expect(malformed.res.status).toBe(503);
    expect(malformed.variables).toEqual(["NEON_WS_PROXY"]);
    const production = await boot({ ...env, ...PRODUCTION, NEON_INSECURE_WS: undefined });
    expect(production.variables).toEqual(["NEON_WS_PROXY"]);
  });

  it("refuses webhook hosts let through to loopback in production, and malformed ones anywhere", async () => {
    const production = await boot({ ...env, ...PRODUCTION, NEON_WS_PROXY: undefined, NEON_INSECURE_WS: undefined, WEBHOOK_ALLOWED_HOSTS: "127.0.0.1" });
    expect(production.res.status).toBe(503);
    expect(production.variables).toEqual(["WEBHOOK_ALLOWED_HOSTS"]);
    const malformed = await boot({ ...env, WEBHOOK_ALLOWED_HOSTS: "127.0.0.1,http://x/" });
    expect(malformed.variables).toEqual(["WEBHOOK_ALLOWED_HOSTS"]);
  });

  it("refuses ws:// to the database in production", async () => {
    const { res, variables } = await boot({ ...env, ...PRODUCTION, NEON_WS_PROXY: undefined, NEON_INSECURE_WS: "true" });
    expect(res.status).toBe(503);
    expect(variables).toEqual(["NEON_INSECURE_WS"]);
  });
});

describe("the cron trigger in workerd", () => {
  it("runs the payment reconciliation, the event outbox pruning and the impression pruning through Neon without an error", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    const database = createNeonDatabase({ url: env.DATABASE_URL as string, wsProxy: env.NEON_WS_PROXY as string, insecure: true });
    const { db, release } = database.session();
    const marker = `usr_cron_${crypto.randomUUID()}`;
    const old = new Date(Date.now() - 5 * 86_400_000).toISOString().slice(0, 10);
    await db.execute(sql`insert into profile_impression_viewers (day, user_id, viewer_id) values (${old}::date, ${marker}, ${marker}), (current_date, ${marker}, ${marker})`);
    const handler = createWorker();
    try {
      const ctx = createExecutionContext();
      // The hour's first run: the one that runs the retention tasks.
      await handler.scheduled({ cron: "*/5 * * * *", scheduledTime: Math.floor(Date.now() / HOUR_MS) * HOUR_MS }, { ...env, LOG_LEVEL: "info" } as WorkerEnv, ctx);
      await waitOnExecutionContext(ctx);
      const lines = log.mock.calls.map((c) => String(c[0]));
      expect(lines.filter((l) => l.includes('"level":"error"'))).toEqual([]);
      const left = await queryRows<{ day: string }>(db, sql`select day::text as day from profile_impression_viewers where user_id = ${marker}`);
      expect(left.map((r) => r.day)).not.toContain(old);
      expect(left).toHaveLength(1);
    } finally {
      await db.execute(sql`delete from profile_impression_viewers where user_id = ${marker}`);
      await release();
    }
    // The app is built once per isolate; the same handler still serves requests.
    const res = await handler.fetch(new Request("http://api.test/health"), env as WorkerEnv, createExecutionContext());
    expect(res.status).toBe(200);
  });

  it("does nothing on a Worker with invalid configuration, and the run fails naming the variable", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    const ctx = createExecutionContext();
    await expect(createWorker().scheduled({}, { ...env, DATABASE_URL: undefined } as WorkerEnv, ctx)).rejects.toThrow(/invalid configuration: DATABASE_URL/);
    await waitOnExecutionContext(ctx);
    expect(log.mock.calls.some((c) => String(c[0]).includes("reconciliation failed"))).toBe(false);
  });

  it("fails the run, after logging each task's failure, when the database cannot be reached", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    const ctx = createExecutionContext();
    const unreachable = { ...env, LOG_LEVEL: "info", NEON_WS_PROXY: "127.0.0.1:1/v2" } as WorkerEnv;
    const run = createWorker().scheduled({}, unreachable, ctx);
    await expect(run).rejects.toThrow(/^scheduled run failed: /);
    const failed = await run.catch((err: Error) => err.message.replace(/^scheduled run failed: /, "").split(", ").sort());
    expect(failed).toEqual([
      "account erasure",
      "account export pruning",
      "account exports",
      "delivery log pruning",
      "event outbox pruning",
      "idempotency key pruning",
      "impression pruning",
      "outbox deliveries",
      "payment reconciliation",
      "translation cache pruning",
      "translation jobs",
      "workflow run pruning",
      "workflow runs",
    ]);
    await waitOnExecutionContext(ctx);
    const lines = log.mock.calls.map((c) => String(c[0]));
    for (const task of failed as string[]) expect(lines.some((l) => l.includes(`"${task} failed"`))).toBe(true);
  });

  it("runs the retention tasks on the hour's first run only; the other runs do the rest", async () => {
    vi.spyOn(console, "log").mockImplementation(() => {});
    const unreachable = { ...env, LOG_LEVEL: "info", NEON_WS_PROXY: "127.0.0.1:1/v2" } as WorkerEnv;
    const tasksOf = async (scheduledTime: number) => {
      const ctx = createExecutionContext();
      const failed = await createWorker()
        .scheduled({ cron: "*/5 * * * *", scheduledTime }, unreachable, ctx)
        .then(() => [] as string[], (err: Error) => err.message.replace(/^scheduled run failed: /, "").split(", "));
      await waitOnExecutionContext(ctx);
      return failed.sort();
    };
    const hour = Date.UTC(2026, 10, 28, 7);
    const every = ["account exports", "outbox deliveries", "payment reconciliation", "translation jobs", "workflow runs"];
    expect(await tasksOf(hour + 5 * 60_000)).toEqual(every);
    expect(await tasksOf(hour + 55 * 60_000)).toEqual(every);
    expect(await tasksOf(hour)).toEqual([...every, ...RETENTION_TASKS.map((t) => t.name)].sort());
  });
});
