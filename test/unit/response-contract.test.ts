import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { describe, expect, it } from "vitest";
import { checkResponse, responseContracts } from "../support/response-contract";

// The check every test's calls go through (test/support/app.ts): it must catch a body that
// drifted from its documented schema, and leave undocumented or non-JSON answers alone.
const Thing = z.object({ id: z.string(), count: z.number().int() });
const app = new OpenAPIHono();
let answer: unknown = { id: "t_1", count: 1 };
// What the app's request middleware does on every answer, unless a test takes it away.
let requestIdOnAnswers = true;
app.use("*", async (c, next) => {
  await next();
  if (requestIdOnAnswers) c.res.headers.set("X-Request-Id", "req_test");
});
app.openapi(
  createRoute({ method: "get", path: "/things/latest", responses: { 200: { description: "the latest", content: { "application/json": { schema: Thing.extend({ latest: z.literal(true) }) } } } } }),
  (c) => c.json({ id: "t_9", count: 9, latest: true as const }, 200),
);
app.openapi(
  createRoute({ method: "get", path: "/things/{id}", responses: { 200: { description: "a thing", content: { "application/json": { schema: Thing } } } } }),
  (c) => c.json(answer as never, 200),
);
let retryAfter: string | undefined = "5";
app.openapi(
  createRoute({ method: "get", path: "/busy", responses: { 429: { description: "slow down", content: { "application/json": { schema: z.object({ error: z.string() }) } } } } }),
  (c) => c.json({ error: "rate_limit_exceeded" }, 429, retryAfter ? { "Retry-After": retryAfter } : {}),
);
const contracts = responseContracts(app);
const call = async (path: string) => {
  const res = await app.request(path);
  await checkResponse(contracts, "GET", path, res);
  return res;
};

describe("the response contract check", () => {
  it("passes answers that match their documented schema, matching routes in the order they were registered, as Hono does", async () => {
    answer = { id: "t_1", count: 1 };
    expect((await call("/things/t_1")).status).toBe(200);
    expect((await call("/things/latest?x=1")).status).toBe(200);
  });

  it("fails on a body that drifted from its schema, naming the route, status and field", async () => {
    answer = { id: "t_1", count: "one" };
    await expect(call("/things/t_1")).rejects.toThrow(/GET \/things\/\{id\} answered 200 .*count/);
  });

  it("fails on a field the schema does not name, at any depth", async () => {
    answer = { id: "t_1", count: 1, secret: "x" };
    await expect(call("/things/t_1")).rejects.toThrow(/does not name: \.secret/);
  });

  it("fails on an answer without the headers the document declares required", async () => {
    answer = { id: "t_1", count: 1 };
    requestIdOnAnswers = false;
    try {
      await expect(call("/things/t_1")).rejects.toThrow(/GET \/things\/\{id\} answered 200 without its documented X-Request-Id/);
    } finally {
      requestIdOnAnswers = true;
    }
    expect((await call("/busy")).status).toBe(429);
    retryAfter = undefined;
    try {
      await expect(call("/busy")).rejects.toThrow(/answered 429 without its documented Retry-After/);
    } finally {
      retryAfter = "5";
    }
  });

  it("leaves alone what the document does not describe: unknown paths and other statuses", async () => {
    expect((await call("/nowhere")).status).toBe(404);
  });
});
