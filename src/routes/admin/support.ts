import { z } from "@hono/zod-openapi";
import { principalOf } from "../../http/auth";
import { createRouter } from "../../http/router";
import { protectedRoute } from "../../http/routes";
import { LANGUAGE_CODES, type LanguageCode } from "../../services/ai/languages";
import { SUPPORT_CATEGORIES } from "../../services/kb/sections";
import { supportStats } from "../../services/support/stats";
import { listTickets, resolveTicket, TICKET_STATUSES } from "../../services/support/tickets";
import { PRIORITIES } from "../../services/support-video/queue";

const json = <T extends z.ZodType>(schema: T, description: string) => ({ description, content: { "application/json": { schema } } });

const Ticket = z
  .object({
    ticketId: z.string(),
    answerId: z.string().openapi({ description: "The support answer that escalated" }),
    userId: z.string(),
    category: z.string(),
    language: z.string(),
    reasons: z.array(z.string()).openapi({ description: "Why the answer escalated, e.g. asked_for_person, self_harm, nothing_found, model" }),
    status: z.enum(TICKET_STATUSES),
    createdAt: z.string(),
    resolvedAt: z.string().nullable(),
    resolvedBy: z.string().nullable(),
    resolutionNote: z.string().nullable(),
  })
  .openapi("SupportTicket");

const TicketQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(50),
  cursor: z.string().max(128).optional().openapi({ description: "The nextCursor of the previous page" }),
  status: z.enum(TICKET_STATUSES).optional(),
  category: z.enum(SUPPORT_CATEGORIES).optional(),
  language: z.enum(LANGUAGE_CODES as [LanguageCode, ...LanguageCode[]]).optional(),
});

const TicketParam = z.object({ ticketId: z.string().regex(/^tkt_[0-9a-z]{26}$/, "a ticket id") });

const Resolution = z
  .object({ note: z.string().trim().min(1).max(2000).optional().openapi({ description: "For whoever reads the ticket next" }) })
  .strict()
  .openapi("SupportTicketResolution");

const Rates = {
  total: z.number().int(),
  escalated: z.number().int(),
  fallback: z.number().int().openapi({ description: "Answered without the model" }),
  cited: z.number().int().openapi({ description: "Answers citing at least one knowledge-base section" }),
  escalationRate: z.number().nullable(),
  fallbackRate: z.number().nullable(),
  citedRate: z.number().nullable(),
};

const Stats = z
  .object({
    from: z.string(),
    to: z.string(),
    answers: z.object(Rates),
    byCategory: z.array(z.object({ category: z.string(), ...Rates })),
    byLanguage: z.array(z.object({ language: z.string(), ...Rates })),
    tickets: z.object({
      opened: z.number().int(),
      resolved: z.number().int(),
      medianResolveSeconds: z.number().int().nullable(),
      open: z.object({
        total: z.number().int(),
        oldestCreatedAt: z.string().nullable(),
        byAge: z.object({ under1h: z.number().int(), from1hTo24h: z.number().int(), from1dTo7d: z.number().int(), over7d: z.number().int() }),
      }),
    }),
    videoQueue: z.object({
      waiting: z.number().int(),
      handlingMinutes: z.number().int(),
      byPriority: z.array(
        z.object({
          priority: z.enum(PRIORITIES),
          waiting: z.number().int(),
          oldestCreatedAt: z.string().nullable(),
          estimatedWaitMinutes: z.number().int().openapi({ description: "For a request of this priority made now" }),
        }),
      ),
    }),
  })
  .openapi("SupportStats");

const Instant = z.iso.datetime({ offset: true }).optional();

export const supportAdminRoutes = createRouter()
  .openapi(
    protectedRoute("admin", {
      method: "get",
      path: "/api/v1/admin/support/tickets",
      tags: ["admin"],
      summary: "Support tickets (escalated answers), newest first",
      request: { query: TicketQuery },
      responses: { 200: json(z.object({ tickets: z.array(Ticket), nextCursor: z.string().nullable() }), "A page of tickets; pass `nextCursor` as `cursor` for the next") },
    }),
    async (c) => c.json(await listTickets(c.var.db, principalOf(c), c.req.valid("query")), 200),
  )
  .openapi(
    protectedRoute("admin", {
      method: "post",
      path: "/api/v1/admin/support/tickets/{ticketId}/resolve",
      tags: ["admin"],
      summary: "Resolve an open ticket, with an optional note",
      request: { params: TicketParam, body: { required: false, description: "Optional; `{}` or no body resolves without a note", content: { "application/json": { schema: Resolution } } } },
      responses: { 200: json(Ticket, "The resolved ticket"), 404: { description: "No such ticket" }, 409: { description: "Already resolved" } },
    }),
    async (c) => {
      const d = c.var.deps;
      const ctx = { db: c.var.db, ids: d.ids, now: d.clock.now(), requestId: c.var.requestId };
      return c.json(await resolveTicket(ctx, principalOf(c), c.req.valid("param").ticketId, c.req.valid("json").note), 200);
    },
  )
  .openapi(
    protectedRoute("admin", {
      method: "get",
      path: "/api/v1/admin/support/stats",
      tags: ["admin"],
      summary: "Support answers, tickets and the video queue in figures",
      request: {
        query: z.object({
          from: Instant.openapi({ description: "ISO 8601 with offset, inclusive; default `to` − 30 days" }),
          to: Instant.openapi({ description: "ISO 8601 with offset, exclusive; default now" }),
        }),
      },
      responses: { 200: json(Stats, "Figures of the window, and the live ticket and queue figures") },
    }),
    async (c) => {
      const d = c.var.deps;
      return c.json(await supportStats({ db: c.var.db, now: d.clock.now(), handlingMinutes: d.config.SUPPORT_VIDEO_HANDLING_MINUTES }, principalOf(c), c.req.valid("query")), 200);
    },
  );
