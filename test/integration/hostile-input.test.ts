import { beforeAll, describe, expect, it } from "vitest";
import { buildTestApp, type TestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { ENTERPRISE } from "../support/people";
import { concretePath, OUTSIDE_PARTIES_UNREACHABLE, ROUTES, type RouteCase } from "../support/routes";
import { newUser } from "../support/users";

// Every route, called by an authorised caller with bodies, path ids and query strings made to
// break it. Whatever arrives, the answer is a 4xx in the documented shape, or the 502/503 of an
// outside party that cannot be reached here; never a 500, never a trace.

const env = useTestEnvironment();
const OBSERVABILITY_TOKEN = "observability-secret-for-hostile-tests";
let t: TestApp;

beforeAll(() => {
  t = buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE, env: { OBSERVABILITY_TOKEN, ...OUTSIDE_PARTIES_UNREACHABLE } });
});

/** The route's valid body with every field replaced by `value`. */
function eachField(route: RouteCase, value: (original: unknown) => unknown): string {
  return JSON.stringify(Object.fromEntries(Object.entries(validBody(route)).map(([k, v]) => [k, value(v)])));
}

function validBody(route: RouteCase): Record<string, unknown> {
  return route.body && typeof route.body === "object" ? (route.body as Record<string, unknown>) : { field: "x" };
}

// As text: building it as a value and stringifying it would exhaust the test's own stack.
const DEEP_OBJECT = `${'{"a":'.repeat(5_000)}1${"}".repeat(5_000)}`;

/** Whole bodies that are wrong as a whole. */
const BODIES: [name: string, build: (route: RouteCase) => string][] = [
  ["null", () => "null"],
  ["an array", () => "[1, 2, 3]"],
  ["a bare string", () => '"text"'],
  ["a bare number", () => "42"],
  ["broken JSON", () => '{"a": '],
  ["nesting 10,000 arrays deep", () => `${"[".repeat(10_000)}${"]".repeat(10_000)}`],
  ["nesting 5,000 objects deep in every field", (r) => eachField(r, () => "(deep)").replaceAll('"(deep)"', DEEP_OBJECT)],
  ["numbers beyond float range", (r) => eachField(r, () => 0).replace(/:0/g, ":1e400")],
  ["null in every field", (r) => eachField(r, () => null)],
  ["prototype keys", () => '{"__proto__": {"admin": true}, "constructor": {"prototype": {"polluted": 1}}}'],
];

/**
 * Values put into one field at a time, the rest of the valid body kept, so that a value the
 * validation lets through goes on to the service and the database.
 */
const FIELD_VALUES: [name: string, value: (original: unknown) => unknown][] = [
  ["a NUL character", (v) => (typeof v === "string" ? `${v}\u0000x` : "\u0000")],
  ["lone surrogates", (v) => (typeof v === "string" ? `\ud800${v}\udfff` : "\udc00")],
  ["100,000 characters", () => "x".repeat(100_000)],
  ["an object", () => ({ $gt: "", toString: 1 })],
  ["a list", (v) => [v, v]],
  ["2^64", () => 18446744073709551616],
  ["a negative number", () => -1],
  ["a fraction", () => 0.5],
  ["an empty string", () => ""],
  // Names every object has: a lookup table that is a plain object finds them (a function, not text).
  ["the word 'constructor'", () => "constructor"],
  ["the word '__proto__'", () => "__proto__"],
];
const PATH_IDS = ["%00", "a".repeat(2_000), "%F0%9F%92%A9%E2%80%AE", "..%2F..%2Fetc", "%ZZ", "'; drop table users; --"];

const QUERIES = ["limit=-1", "limit=abc", "limit=1e400", "limit=99999999999999999999", "cursor=%00", `cursor=${"x".repeat(4_000)}`, "offset=-5", "lastEventId=%00", "limit=1&limit=2"];

function headersFor(route: RouteCase, user: { headers: Record<string, string> }): Record<string, string> {
  if (route.access === "observability") return { "x-observability-token": OBSERVABILITY_TOKEN };
  if (route.access === "public" || route.access === "webhook") return {};
  return user.headers;
}

const HEALTH_ROUTES = new Set(["/health", "/api/v1/ai-agents/health"]);

/** Checks one answer: the status, the shape, and that nothing internal leaks. */
async function expectHandled(route: RouteCase, res: Response, what: string): Promise<void> {
  const text = await res.text();
  expect(res.status, `${what}: ${text.slice(0, 300)}`).not.toBe(500);
  expect([502, 503].includes(res.status) || (res.status >= 200 && res.status < 500), `${what}: ${res.status}`).toBe(true);
  // The reference page's script is a third-party build whose code names such things; it is no answer of ours.
  if (!(res.headers.get("content-type") ?? "").startsWith("text/javascript")) {
    expect(text, what).not.toMatch(/\bat [\w.<>]+ \(|node_modules|stack|TypeError|RangeError|SyntaxError: Unexpected|\bSQL\b|syntax error at/);
  }
  // The health routes answer 503 with their own documented report, not an error.
  if (res.status >= 400 && !HEALTH_ROUTES.has(route.template)) {
    const body = JSON.parse(text) as { error?: unknown; success?: unknown };
    // Shape 1 names the error in `error`; shape 2 (AI routes) has success: false and an error object.
    expect(typeof body.error === "string" || (body.success === false && typeof body.error === "object"), `${what}: ${text.slice(0, 300)}`).toBe(true);
  }
}

const send = (route: RouteCase, user: { headers: Record<string, string> }, body: string) =>
  t.request(concretePath(route), { method: route.method, headers: { ...headersFor(route, user), "content-type": "application/json" }, body });

describe.each(ROUTES.filter((r) => r.method !== "GET"))("$method $template with hostile bodies", (route) => {
  it("answers every whole body without a 500", async () => {
    const user = await newUser(env.issuer, { admin: true });
    for (const [name, build] of BODIES) await expectHandled(route, await send(route, user, build(route)), name);
  });
});

describe.each(ROUTES.filter((r) => r.body !== undefined && Object.keys(validBody(r)).length > 0))("$method $template with a hostile value in one field", (route) => {
  it("answers each, in any field, without a 500", async () => {
    const user = await newUser(env.issuer, { admin: true });
    const valid = validBody(route);
    for (const field of Object.keys(valid)) {
      for (const [name, value] of FIELD_VALUES) {
        await expectHandled(route, await send(route, user, JSON.stringify({ ...valid, [field]: value(valid[field]) })), `${field}: ${name}`);
      }
    }
  });
});

describe.each(ROUTES.filter((r) => r.template.includes("{")))("$method $template with hostile path ids", (route) => {
  it("answers every one without a 500", async () => {
    const user = await newUser(env.issuer, { admin: true });
    for (const id of PATH_IDS) {
      const path = route.template.replace(/\{(\w+)\}/g, id);
      const hasBody = route.body !== undefined;
      const res = await t.request(path, {
        method: route.method,
        headers: { ...headersFor(route, user), ...(hasBody ? { "content-type": "application/json" } : {}) },
        body: hasBody ? JSON.stringify(route.body) : undefined,
      });
      await expectHandled(route, res, id.slice(0, 40));
    }
  });
});

describe.each(ROUTES.filter((r) => r.method === "GET" && r.template !== "/api/v1/matches/events"))("$method $template with hostile query strings", (route) => {
  it("answers every one without a 500", async () => {
    const user = await newUser(env.issuer, { admin: true });
    const base = concretePath(route);
    for (const query of QUERIES) {
      const res = await t.request(`${base}${base.includes("?") ? "&" : "?"}${query}`, { headers: headersFor(route, user) });
      await expectHandled(route, res, query.slice(0, 40));
    }
  });
});
