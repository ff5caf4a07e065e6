import { beforeAll, describe, expect, it } from "vitest";
import { REFERENCE_SCRIPT_PATH } from "../../src/routes/docs";
import { buildTestApp, type TestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { checkReferencePage } from "../support/reference-page";

const env = useTestEnvironment();
let t: TestApp;

beforeAll(() => {
  t = buildTestApp({ database: env.db.database });
});

describe("the API reference page (/docs)", () => {
  it("serves the page and its script from this origin, scripts allowed by a per-request CSP nonce", async () => {
    await checkReferencePage((path) => t.request(path));
  });

  it("points the page at the OpenAPI document the app serves", async () => {
    const html = await (await t.request("/docs")).text();
    const url = /"url": "([^"]+)"/.exec(html)?.[1];
    expect(url).toBe("/openapi.json");
    const doc = await t.request(url as string);
    expect(doc.status).toBe(200);
    expect(((await doc.json()) as { openapi: string }).openapi).toBe("3.1.0");
  });

  it("turns the third-party defaults off: no default fonts, no telemetry, no hosted agent", async () => {
    const html = await (await t.request("/docs")).text();
    expect(html).toContain('"withDefaultFonts": false');
    expect(html).toContain('"telemetry": false');
    expect(html).toContain('"disabled": true');
  });

  it("carries a request id and logs an access line like every route", async () => {
    const first = await t.request("/docs");
    await first.body?.cancel();
    const id = first.headers.get("x-request-id") as string;
    const res = await t.request(REFERENCE_SCRIPT_PATH, { headers: { "x-request-id": id } });
    expect(res.headers.get("x-request-id")).toBe(id);
    await res.body?.cancel();
    expect(t.logs.filter((l) => l.requestId === id).map((l) => l.status)).toEqual([200, 200]);
  });

  it("answers HEAD without a body and other methods 404", async () => {
    const head = await t.request("/docs", { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
    const post = await t.request("/docs", { method: "POST" });
    expect(post.status).toBe(404);
  });
});
