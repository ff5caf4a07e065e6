import { describe, expect, it } from "vitest";
import { buildTestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { json, newUser } from "../support/users";
import { n8nWorkflowProblems } from "../support/n8n-workflow-schema";
import { sampleWorkflow, saveWorkflow } from "../support/workflows";

const env = useTestEnvironment();
const BASE = "/api/v1/messaging/workflows";

describe("messaging workflows: drafts", () => {
  it("saves a draft, reads it back and lists it newest first", async () => {
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer });
    const admin = await newUser(env.issuer, { admin: true });
    const first = await saveWorkflow(t, admin, sampleWorkflow("first"));
    const second = await saveWorkflow(t, admin, sampleWorkflow("second"));
    expect(first).toMatchObject({ name: "first", description: "Greets a new match", version: 1, nodeCount: 5, engineWorkflowId: null, syncedVersion: null });
    expect(first.workflowId).toMatch(/^wfl_/);
    expect(first.nodes).toEqual(sampleWorkflow().nodes);
    expect(first.edges).toEqual(sampleWorkflow().edges);
    // Drafts compile without an engine configured; the preview is a body n8n accepts.
    expect(n8nWorkflowProblems(first.compiled)).toEqual([]);
    expect((first.compiled as { name: string }).name).toBe("first");

    const read = await t.request(`${BASE}/${first.workflowId}`, { headers: admin.headers });
    expect(read.status).toBe(200);
    expect(await read.json()).toEqual(first);

    const page1 = await t.request(`${BASE}?limit=1`, { headers: admin.headers });
    const body1 = (await page1.json()) as { workflows: { workflowId: string }[]; nextCursor: string | null };
    expect(body1.workflows.map((w) => w.workflowId)).toEqual([second.workflowId]);
    expect(body1.nextCursor).not.toBeNull();
    const page2 = await t.request(`${BASE}?limit=1&cursor=${body1.nextCursor}`, { headers: admin.headers });
    const body2 = (await page2.json()) as { workflows: { workflowId: string; nodes?: unknown }[] };
    expect(body2.workflows[0]?.workflowId).toBe(first.workflowId);
    // The list is a summary: graphs are read one at a time.
    expect(body2.workflows[0]?.nodes).toBeUndefined();
  });

  it("refuses a broken graph with 400 naming each problem by node or edge id, and stores nothing", async () => {
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer });
    const admin = await newUser(env.issuer, { admin: true });
    const body = sampleWorkflow("broken");
    body.nodes[2] = { id: "hello", type: "send_message", data: { channel: "fax", template: "Hi {{secret}}" } };
    body.edges.push({ id: "e5", source: "mail", target: "ghost" });
    const res = await t.request(BASE, json(body, admin.headers));
    expect(res.status).toBe(400);
    const err = (await res.json()) as { error: string; details: { path: string }[] };
    expect(err.error).toBe("invalid_input");
    expect(err.details.map((d) => d.path).sort()).toEqual(["edges.e5.target", "nodes.hello.data.channel", "nodes.hello.data.template"]);
    const list = (await (await t.request(BASE, { headers: admin.headers })).json()) as { workflows: { name: string }[] };
    expect(list.workflows.map((w) => w.name)).not.toContain("broken");
  });

  it("answers bad input with 400 and unknown ids with 404, never 500", async () => {
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer });
    const admin = await newUser(env.issuer, { admin: true });
    for (const body of [{}, { name: "x", nodes: "no", edges: [] }, { ...sampleWorkflow(), extra: 1 }, { ...sampleWorkflow(), name: "" }]) {
      const res = await t.request(BASE, json(body, admin.headers));
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    expect((await t.request(`${BASE}?cursor=garbage`, { headers: admin.headers })).status).toBe(400);
    expect((await t.request(`${BASE}?limit=0`, { headers: admin.headers })).status).toBe(400);
    expect((await t.request(`${BASE}/wfl_nothing`, { headers: admin.headers })).status).toBe(404);
    expect((await t.request(`${BASE}/${"x".repeat(65)}`, { headers: admin.headers })).status).toBe(400);
  });

  it("is for admins only", async () => {
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer });
    const admin = await newUser(env.issuer, { admin: true });
    const member = await newUser(env.issuer);
    const saved = await saveWorkflow(t, admin);
    expect((await t.request(BASE, json(sampleWorkflow(), member.headers))).status).toBe(403);
    expect((await t.request(BASE, { headers: member.headers })).status).toBe(403);
    expect((await t.request(`${BASE}/${saved.workflowId}`, { headers: member.headers })).status).toBe(403);
    expect((await t.request(`${BASE}/${saved.workflowId}`)).status).toBe(401);
  });
});
