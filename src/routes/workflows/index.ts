import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { principalOf } from "../../http/auth";
import type { AppEnv } from "../../http/env";
import { createRouter, jsonBody } from "../../http/router";
import { protectedRoute } from "../../http/routes";
import { createWorkflow, getWorkflow, listWorkflows, summaryOf, type WorkflowRow, type WorkflowServiceDeps } from "../../services/workflows/workflows";
import { compileWorkflow } from "../../services/workflows/compile";
import { syncWorkflow } from "../../services/workflows/sync";
import { compileOptionsFrom } from "../../services/workflows/engine-config";
import { CompiledWorkflow, ListQuery, WorkflowIdParam, WorkflowInput, WorkflowList, WorkflowSummary } from "./schemas";

const BASE = "/api/v1/messaging/workflows";

const Workflow = WorkflowSummary.extend({
  nodes: z.array(z.object({ id: z.string(), type: z.string(), data: z.record(z.string(), z.unknown()) })),
  edges: z.array(z.object({ id: z.string(), source: z.string(), target: z.string(), label: z.string().optional() })),
  compiled: CompiledWorkflow,
}).openapi("Workflow");

const deps = (c: Context<AppEnv>): WorkflowServiceDeps => ({ db: c.var.db, ids: c.var.deps.ids, now: c.var.deps.clock.now(), requestId: c.var.requestId });

function view(c: Context<AppEnv>, row: WorkflowRow) {
  return { ...summaryOf(row), nodes: row.graph.nodes, edges: row.graph.edges, compiled: compileWorkflow(row.id, row.name, row.graph, compileOptionsFrom(c.var.deps.config)) };
}

export const workflowRoutes = createRouter()
  .openapi(
    protectedRoute("admin", {
      method: "get",
      path: BASE,
      tags: ["messaging workflows"],
      summary: "List saved workflows, newest first",
      request: { query: ListQuery },
      responses: { 200: { description: "A page of workflows", content: { "application/json": { schema: WorkflowList } } } },
    }),
    async (c) => {
      const { limit, cursor } = c.req.valid("query");
      return c.json(await listWorkflows(deps(c), principalOf(c), limit ?? 50, cursor), 200);
    },
  )
  .openapi(
    protectedRoute("admin", {
      method: "post",
      path: BASE,
      tags: ["messaging workflows"],
      summary: "Save a draft workflow and compile an automation preview",
      request: { body: jsonBody(WorkflowInput) },
      responses: { 201: { description: "Saved", content: { "application/json": { schema: Workflow } } } },
    }),
    async (c) => c.json(view(c, await createWorkflow(deps(c), principalOf(c), c.req.valid("json"))), 201),
  )
  .openapi(
    protectedRoute("admin", {
      method: "get",
      path: `${BASE}/{workflowId}`,
      tags: ["messaging workflows"],
      summary: "A workflow's nodes, edges and compiled automation-engine payload",
      request: { params: WorkflowIdParam },
      responses: {
        200: { description: "The workflow", content: { "application/json": { schema: Workflow } } },
        404: { description: "No such workflow" },
      },
    }),
    async (c) => c.json(view(c, await getWorkflow(deps(c), principalOf(c), c.req.valid("param").workflowId)), 200),
  )
  .openapi(
    protectedRoute("admin", {
      method: "post",
      path: `${BASE}/{workflowId}/sync`,
      tags: ["messaging workflows"],
      summary: "Create or replace the workflow in the automation engine and activate it",
      request: { params: WorkflowIdParam },
      responses: {
        200: { description: "Synced: the engine holds this version, active", content: { "application/json": { schema: Workflow } } },
        404: { description: "No such workflow" },
        502: { description: "The automation engine refused or failed; `details` carries its message" },
      },
    }),
    async (c) => {
      const row = await syncWorkflow({ ...deps(c), config: c.var.deps.config, fetch: c.var.deps.fetch }, principalOf(c), c.req.valid("param").workflowId);
      return c.json(view(c, row), 200);
    },
  );
