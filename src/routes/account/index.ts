import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { principalOf } from "../../http/auth";
import { deferOnSession } from "../../http/defer";
import type { AppEnv } from "../../http/env";
import { createRouter } from "../../http/router";
import { ErrorBody, protectedRoute } from "../../http/routes";
import { idPattern } from "../../platform/ids";
import { runAccountExports } from "../../services/account/export-runner";
import { exportStatus, requestExport, takeDownload } from "../../services/account/exports";
import { ExportDocument } from "./document-schema";

/**
 * How long the build a request starts may go on: within what Workers grant a waitUntil after the
 * answer. What is left is taken up by the schedule (Node) or the cron trigger (Workers).
 */
export const EXPORT_KICK_BUDGET_MS = 25_000;

const ExportId = z.string().max(64).regex(idPattern("exp"), "an export id (exp_…)");
const json = <T extends z.ZodType>(schema: T, description: string) => ({ description, content: { "application/json": { schema } } });
const err = (description: string) => json(ErrorBody, description);

const Accepted = z.object({ exportId: z.string() }).openapi("AccountExportAccepted");
const ExportState = z
  .object({
    exportId: z.string(),
    status: z.enum(["pending", "running", "ready", "failed", "expired"]).openapi({ description: "`expired`: downloaded, or its 24 hours passed; request a new one" }),
    createdAt: z.string(),
    readyAt: z.string().nullable(),
    expiresAt: z.string().nullable().openapi({ description: "End of the download window (24 hours after `readyAt`)" }),
    byteSize: z.number().int().nullable(),
    download: z
      .object({ url: z.string().openapi({ description: "Path on the API's base URL; works once" }), expiresAt: z.string() })
      .nullable()
      .openapi({ description: "Only while `ready`. Each read issues a new link; the one issued before stops working." }),
  })
  .openapi("AccountExport");

function kickExports(c: Context<AppEnv>): void {
  const deps = c.get("deps");
  const work = runAccountExports({ db: c.get("db"), kv: deps.kv, clock: deps.clock, logger: deps.logger, signal: deps.stopping, budgetMs: EXPORT_KICK_BUDGET_MS });
  deps.background?.track(work);
  deferOnSession(c, work, "account exports");
}

const context = (c: Context<AppEnv>) => ({ db: c.var.db, ids: c.var.deps.ids, random: c.var.deps.random, now: c.var.deps.clock.now() });

export const accountRoutes = createRouter()
  .openapi(
    protectedRoute("user", {
      method: "post",
      path: "/api/v1/account/export",
      tags: ["account"],
      summary: "Ask for a copy of everything the platform keeps about you (built in the background; at most 3 in 24 hours)",
      responses: {
        202: { ...json(Accepted, "Queued; follow it at the `Location`"), headers: z.object({ Location: z.string() }) },
        403: err("An API key: exports take the member's own access token"),
      },
    }),
    async (c) => {
      const { exportId } = await requestExport(context(c), principalOf(c));
      kickExports(c);
      c.header("Location", `/api/v1/account/exports/${exportId}`);
      return c.json({ exportId }, 202);
    },
  )
  .openapi(
    protectedRoute("user", {
      method: "get",
      path: "/api/v1/account/exports/{exportId}",
      tags: ["account"],
      summary: "Your export's state and, once ready, a one-use download link",
      request: { params: z.object({ exportId: ExportId }) },
      responses: {
        200: json(ExportState, "The export"),
        403: err("An API key: exports take the member's own access token"),
        404: err("No such export of yours"),
      },
    }),
    async (c) => {
      c.header("Cache-Control", "no-store");
      return c.json(await exportStatus(context(c), principalOf(c), c.req.valid("param").exportId), 200);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/api/v1/account/exports/{exportId}/download",
      tags: ["account"],
      summary: "Download an export once, by the link its state gave (the token is the credential)",
      security: [],
      request: { params: z.object({ exportId: ExportId }), query: z.object({ token: z.string().regex(/^[0-9a-f]{64}$/, "64 hex characters") }) },
      responses: {
        200: json(ExportDocument, "The document, as an attachment"),
        400: err("`token` missing or malformed"),
        404: err("No such export, or the link was used, replaced or has expired"),
      },
    }),
    async (c) => {
      const { exportId } = c.req.valid("param");
      const document = await takeDownload({ db: c.var.db, now: c.var.deps.clock.now() }, exportId, c.req.valid("query").token);
      // Sent as a stream of its JSON text, which the typed handler's json() answers cannot express.
      const streamed = new Response(streamText(document), {
        status: 200,
        headers: {
          "Content-Type": "application/json; charset=utf-8",
          "Content-Disposition": `attachment; filename="account-export-${exportId}.json"`,
          "Cache-Control": "no-store",
        },
      });
      return streamed as never;
    },
  );

/** The document in 64 KiB pieces, encoded as they are sent rather than all at once. */
function streamText(text: string): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const PIECE = 65_536;
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= text.length) return controller.close();
      // Never split a surrogate pair: the piece ends before a lone high surrogate.
      let end = Math.min(offset + PIECE, text.length);
      const last = text.charCodeAt(end - 1);
      if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
      controller.enqueue(encoder.encode(text.slice(offset, end)));
      offset = end;
    },
  });
}
