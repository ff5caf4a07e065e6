import { createRoute, z } from "@hono/zod-openapi";
import { beforeAll, describe, expect, it } from "vitest";
import { createRouter, jsonBody } from "../../src/http/router";
import { buildTestApp, type TestApp } from "../support/app";
import { useTestDatabase } from "../support/environment";

// A route of the same kind every feature declares, to drive the shared validation and error path.
const echo = createRouter()
  .openapi(
    createRoute({
      method: "post",
      path: "/__test/echo",
      request: { body: jsonBody(z.object({ name: z.string().min(1), tags: z.array(z.string()).max(2), age: z.number().int() })) },
      responses: { 200: { description: "echo", content: { "application/json": { schema: z.object({ name: z.string() }) } } } },
    }),
    (c) => c.json({ name: c.req.valid("json").name }, 200),
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/__test/search/{kind}",
      request: { params: z.object({ kind: z.enum(["a", "b"]) }), query: z.object({ limit: z.coerce.number().int().min(1).max(50) }) },
      responses: { 200: { description: "search", content: { "application/json": { schema: z.object({ limit: z.number() }) } } } },
    }),
    (c) => c.json({ limit: c.req.valid("query").limit }, 200),
  )
  .openapi(
    createRoute({ method: "get", path: "/__test/boom", responses: { 200: { description: "never" } } }),
    () => {
      throw new Error('duplicate key value violates unique constraint "users_pkey" at SELECT * FROM secrets');
    },
  );

const env = useTestDatabase();
let t: TestApp;

beforeAll(() => {
  t = buildTestApp({ database: env.db.database });
  t.app.route("/", echo);
});

function expectShape1(body: Record<string, unknown>, error: string, code: number) {
  expect(body).toMatchObject({ error, code });
  expect(typeof body.message).toBe("string");
  expect(body.requestId).toMatch(/^req_/);
}

const post = (body: BodyInit, type = "application/json") => t.request("/__test/echo", { method: "POST", headers: { "content-type": type }, body });

describe("request hygiene", () => {
  it("answers unknown paths 404 in shape 1 with a request id header", async () => {
    const res = await t.request("/nope");
    expect(res.status).toBe(404);
    const body = (await res.json()) as Record<string, unknown>;
    expectShape1(body, "not_found", 404);
    expect(res.headers.get("x-request-id")).toBe(body.requestId);
  });

  it("answers an unknown path 404 whatever its body, without the body checks a route's request passes, and logs it", async () => {
    const before = t.logs.length;
    const direct = await t.app.fetch(new Request("http://localhost/nope/deeper?x=1"));
    expect(direct.status).toBe(404);
    // A path no route takes is 404 whatever its body: the size and type rules are a route's.
    const tooBig = await t.request("/nope", { method: "POST", headers: { "content-type": "application/json", "content-length": String(2 * 1024 * 1024) }, body: "{}" });
    const wrongType = await t.request("/nope", { method: "PUT", headers: { "content-type": "text/plain" }, body: "hello" });
    for (const res of [tooBig, wrongType]) {
      expect(res.status).toBe(404);
      expectShape1((await res.json()) as Record<string, unknown>, "not_found", 404);
    }
    const lines = t.logs.slice(before).filter((l) => l.msg === "request");
    expect(lines.map((l) => [l.method, l.route, l.path, l.status, l.requestId])).toEqual([
      ["GET", "/*", "/nope/deeper", 404, direct.headers.get("x-request-id")],
      ["POST", "/*", "/nope", 404, tooBig.headers.get("x-request-id")],
      ["PUT", "/*", "/nope", 404, wrongType.headers.get("x-request-id")],
    ]);
  });

  it("answers a route's path under another method, and HEAD of an unknown path, 404", async () => {
    const wrongMethod = await t.request("/__test/echo", { method: "PATCH", headers: { "content-type": "application/json" }, body: "{}" });
    expect(wrongMethod.status).toBe(404);
    expect(((await wrongMethod.json()) as { message: string }).message).toBe("no route for PATCH /__test/echo");
    const head = await t.request("/nope", { method: "HEAD" });
    expect(head.status).toBe(404);
    expect(head.headers.get("x-request-id")).toMatch(/^req_/);
    expect(await head.text()).toBe("");
  });

  it("keeps an incoming X-Request-Id of our own shape and replaces a hostile one", async () => {
    const kept = await t.request("/nope", { headers: { "x-request-id": "req_01m8f4dt4reg5k6qxcfy7hxfra" } });
    expect(kept.headers.get("x-request-id")).toBe("req_01m8f4dt4reg5k6qxcfy7hxfra");
    const replaced = await t.request("/nope", { headers: { "x-request-id": "bad id\twith spaces" } });
    expect(replaced.headers.get("x-request-id")).toMatch(/^req_/);
  });

  it("accepts a valid body", async () => {
    const res = await post(JSON.stringify({ name: "Ada", tags: [], age: 36 }));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ name: "Ada" });
  });

  it("lists every failing field path on validation errors", async () => {
    const res = await post(JSON.stringify({ name: "", tags: ["a", "b", "c"], age: 1.5 }));
    expect(res.status).toBe(400);
    const body = (await res.json()) as { details: { path: string }[] } & Record<string, unknown>;
    expectShape1(body, "invalid_input", 400);
    expect(body.details.map((d) => d.path).sort()).toEqual(["age", "name", "tags"]);
  });

  it("says in the message which part of the request failed: body, query or path", async () => {
    const cases: [Promise<Response>, string, string][] = [
      [post(JSON.stringify({ name: "", tags: [], age: 1 })), "invalid request body", "name"],
      [post("{\"name\":"), "malformed JSON body", "(body)"],
      [t.request("/__test/search/a?limit=500"), "invalid query parameters", "limit"],
      [t.request("/__test/search/c?limit=5"), "invalid path parameters", "kind"],
    ];
    for (const [pending, message, path] of cases) {
      const res = await pending;
      expect(res.status).toBe(400);
      const body = (await res.json()) as { message: string; details: { path: string }[] };
      expect(body.message).toBe(message);
      expect(body.details.map((d) => d.path)).toEqual([path]);
    }
    expect((await t.request("/__test/search/b?limit=5")).status).toBe(200);
  });

  it.each([
    ["broken JSON", "{\"name\": \"Ada\",", "application/json"],
    ["an empty JSON body", "", "application/json"],
    ["JSON of the wrong type", "[1,2,3]", "application/json"],
    ["a form body", "name=Ada", "application/x-www-form-urlencoded"],
    ["plain text", "hello", "text/plain"],
    ["odd unicode", "{\"name\": \"\u0000\ud83d\ude00\u202e\", \"tags\": [], \"age\": \"x\"}", "application/json"],
  ])("answers %s with 400 invalid_input", async (_label, body, type) => {
    const res = await post(body, type);
    expect(res.status).toBe(400);
    expectShape1((await res.json()) as Record<string, unknown>, "invalid_input", 400);
  });

  it("takes any Unicode text, emoji and right-to-left marks included, but answers NUL or an unpaired surrogate with 400 naming the field", async () => {
    const ok = await post(JSON.stringify({ name: "Zoë 😀 \u202eabc", tags: ["日本語"], age: 30 }));
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ name: "Zoë 😀 \u202eabc" });
    for (const [body, path] of [
      [{ name: "Ada\u0000", tags: [], age: 30 }, "name"],
      [{ name: "Ada", tags: ["ok", "\ud83d"], age: 30 }, "tags.1"],
      [{ name: "\ude00Ada", tags: [], age: 30 }, "name"],
    ] as const) {
      const res = await post(JSON.stringify(body));
      expect(res.status).toBe(400);
      const answer = (await res.json()) as Record<string, unknown>;
      expectShape1(answer, "invalid_input", 400);
      expect(answer.details).toEqual([{ path, message: "text must be valid Unicode without NUL characters" }]);
    }
  });

  it("answers a body over 1 MiB with 413, with or without Content-Length", async () => {
    const big = JSON.stringify({ name: "x".repeat(1024 * 1024 + 10), tags: [], age: 1 });
    const declared = await post(big);
    expect(declared.status).toBe(413);
    expectShape1((await declared.json()) as Record<string, unknown>, "payload_too_large", 413);

    const chunks = new ReadableStream<Uint8Array>({
      start(controller) {
        const chunk = new TextEncoder().encode("x".repeat(64 * 1024));
        for (let i = 0; i < 20; i++) controller.enqueue(chunk);
        controller.close();
      },
    });
    const streamed = await t.request("/__test/echo", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: chunks,
      duplex: "half",
    } as RequestInit);
    expect(streamed.status).toBe(413);
  });

  it("answers a thrown unknown error with 500 'internal error' and nothing else", async () => {
    const res = await t.request("/__test/boom");
    expect(res.status).toBe(500);
    const text = await res.text();
    const body = JSON.parse(text) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(["code", "error", "message", "requestId"]);
    expect(body).toMatchObject({ error: "internal_error", message: "internal error", code: 500 });
    expect(text).not.toMatch(/stack|SELECT|duplicate key|at \//);
    const logged = t.logs.find((l) => l.msg === "request failed" && l.requestId === body.requestId);
    expect(JSON.stringify(logged)).toContain("duplicate key");
  });

  it("answers very long and odd paths with 404 in shape 1", async () => {
    for (const path of [`/${"a".repeat(16_000)}`, "/%F0%9F%98%80/%E2%80%AE/%00", "/..%2F..%2Fetc%2Fpasswd", "/%ZZ"]) {
      const res = await t.request(path);
      expect(res.status).toBe(404);
      expectShape1((await res.json()) as Record<string, unknown>, "not_found", 404);
    }
  });

  it("writes one JSON access-log line per request, without credentials", async () => {
    const before = t.logs.length;
    const res = await t.request("/health", { headers: { authorization: "Bearer super-secret-token-value" } });
    const lines = t.logs.slice(before).filter((l) => l.msg === "request");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ method: "GET", route: "/health", status: res.status, requestId: res.headers.get("x-request-id") });
    expect(typeof lines[0]?.durationMs).toBe("number");
    expect(JSON.stringify(t.logs)).not.toContain("super-secret-token-value");
  });

  it("logs a body refused before the handler with the status it answered", async () => {
    const before = t.logs.length;
    const tooBig = await t.request("/api/v1/wallet/transfer", { method: "POST", headers: { "content-type": "application/json", "content-length": String(2 * 1024 * 1024) }, body: "{}" });
    const wrongType = await t.request("/api/v1/wallet/transfer", { method: "POST", headers: { "content-type": "text/plain" }, body: "hello" });
    expect([tooBig.status, wrongType.status]).toEqual([413, 400]);
    const lines = t.logs.slice(before).filter((l) => l.msg === "request");
    expect(lines.map((l) => [l.status, l.requestId])).toEqual([
      [413, tooBig.headers.get("x-request-id")],
      [400, wrongType.headers.get("x-request-id")],
    ]);
  });
});
