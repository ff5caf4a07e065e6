import { createRoute, z } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import { principalOf } from "../../http/auth";
import type { AppEnv } from "../../http/env";
import { IdempotencyHeader, idempotent } from "../../http/idempotency";
import { createRouter, jsonBody } from "../../http/router";
import { ErrorBody, protectedRoute } from "../../http/routes";
import { sqlDeliveryRecords } from "../../services/delivery-records/records";
import { applyCallback, authenticateCallback } from "../../services/workflows/callback";
import { listRuns, startRun, STATUS_PATH } from "../../services/workflows/runs";
import { ListQuery, WorkflowIdParam } from "./schemas";
import { RunAccepted, RunInput, RunList, StatusAnswer, StatusCallback } from "./run-schemas";

const BASE = "/api/v1/messaging/workflows";
const err = (description: string) => ({ description, content: { "application/json": { schema: ErrorBody } } });

/** Before the body's shape is checked: an unauthenticated caller gets 401 whatever it sent. */
const verifiedCallback: MiddlewareHandler<AppEnv> = async (c, next) => {
  await authenticateCallback({ db: c.var.db, config: c.var.deps.config }, await c.req.text(), c.req.header("authorization"), c.req.header("x-workflow-signature"));
  await next();
};

export const workflowRunRoutes = createRouter()
  .openapi(
    protectedRoute("admin", {
      method: "post",
      path: `${BASE}/{workflowId}/run`,
      tags: ["messaging workflows"],
      summary: "Start a run: stored, then handed to the automation engine through the outbox",
      middleware: [idempotent],
      request: { params: WorkflowIdParam, headers: IdempotencyHeader, body: jsonBody(RunInput) },
      responses: {
        202: { description: "Queued; the engine reports its state to the status callback", content: { "application/json": { schema: RunAccepted } } },
        404: { description: "No such workflow" },
        409: { description: "Not synced to the engine yet, or Idempotency-Key reused with another body or still in flight" },
        503: { description: "The automation engine is not configured (the message names the variable)" },
      },
    }),
    async (c) => {
      const d = c.var.deps;
      const run = await startRun(
        { db: c.var.db, ids: d.ids, random: d.random, now: d.clock.now(), config: d.config, requestId: c.var.requestId, idempotency: c.var.idempotency, origin: new URL(c.req.url).origin, dispatch: d.outboxDispatch },
        principalOf(c),
        c.req.valid("param").workflowId,
        c.req.valid("json").input ?? {},
      );
      return c.json(run, 202);
    },
  )
  .openapi(
    protectedRoute("admin", {
      method: "get",
      path: `${BASE}/{workflowId}/runs`,
      tags: ["messaging workflows"],
      summary: "The workflow's runs, newest first, with state, times, error and per-message outcomes",
      request: { params: WorkflowIdParam, query: ListQuery },
      responses: {
        200: { description: "A page of runs", content: { "application/json": { schema: RunList } } },
        404: { description: "No such workflow" },
      },
    }),
    async (c) => {
      const { limit, cursor } = c.req.valid("query");
      return c.json(await listRuns({ db: c.var.db }, principalOf(c), c.req.valid("param").workflowId, limit ?? 50, cursor), 200);
    },
  )
  .openapi(
    createRoute({
      method: "post",
      path: STATUS_PATH,
      tags: ["messaging workflows"],
      summary: "The automation engine reports a run's state (the run's token as Bearer, or X-Workflow-Signature: sha256=<HMAC of the body>)",
      security: [],
      middleware: [verifiedCallback],
      request: {
        headers: z.object({ authorization: z.string().optional(), "x-workflow-signature": z.string().optional() }),
        body: jsonBody(StatusCallback),
      },
      responses: {
        200: { description: "Applied, or a replay / late report that changes nothing (`changed: false`)", content: { "application/json": { schema: StatusAnswer } } },
        400: err("The body does not match (after authentication)"),
        401: err("No run token or body signature that verifies"),
        404: err("No such run (signed callbacks only: a token of an unknown run is 401)"),
        409: err("The run already ended otherwise: an impossible move"),
        413: err("Body over 1 MiB (`payload_too_large`)"),
      },
    }),
    async (c) => {
      const d = c.var.deps;
      const result = await applyCallback({ db: c.var.db, config: d.config, records: sqlDeliveryRecords(d.ids), now: d.clock.now() }, c.req.valid("json"));
      return c.json(result, 200);
    },
  );

