import { ProfileCardSchema } from "../profiles/card-schema";
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { principalOf } from "../../http/auth";
import type { AppEnv } from "../../http/env";
import { createRouter, jsonBody } from "../../http/router";
import { protectedRoute } from "../../http/routes";
import { listMatches, unmatch, type MatchingContext } from "../../services/matching/matches";
import { swipe } from "../../services/matching/swipes";
import { acceptWink, declineWink, receivedWinks, sendWink } from "../../services/matching/winks";
import { matchEventStream } from "./events";

const UserId = z.string().min(1).max(64).regex(/^[A-Za-z0-9_-]+$/, "a user id");
const ResourceId = z.string().min(1).max(64).regex(/^[A-Za-z0-9_-]+$/, "an id");

const SwipeInput = z.object({ targetUserId: UserId, action: z.enum(["like", "pass", "wink"]) }).strict().openapi("SwipeInput");
const SwipeResult = z
  .object({
    action: z.enum(["like", "pass", "wink"]),
    matched: z.boolean(),
    matchId: z.string().optional().openapi({ description: "Present when the swipe made (or found) a match" }),
    winkId: z.string().optional().openapi({ description: "Present when a wink swipe sent a wink" }),
  })
  .openapi("SwipeResult");
const WinkInput = z.object({ toUserId: UserId, message: z.string().trim().min(1).max(280).optional() }).strict().openapi("WinkInput");
const WinkSent = z
  .object({
    winkId: z.string(),
    status: z.literal("pending"),
    toUserId: z.string(),
    message: z.string().nullable(),
    createdAt: z.string(),
    remainingToday: z.number().int().nullable().openapi({ description: "Winks left today on the free tier; null on paid tiers (no cap)" }),
  })
  .openapi("WinkSent");
const Card = ProfileCardSchema.nullable().openapi({ description: "The other person's profile card; null without a profile" });
const ReceivedWinks = z
  .object({
    winks: z.array(z.object({ winkId: z.string(), fromUserId: z.string(), message: z.string().nullable(), status: z.literal("pending"), createdAt: z.string(), profile: Card })),
    count: z.number().int(),
  })
  .openapi("ReceivedWinks");
const Accepted = z.object({ winkId: z.string(), status: z.literal("accepted"), matchId: z.string() }).openapi("WinkAccepted");
const Declined = z.object({ winkId: z.string(), status: z.literal("declined") }).openapi("WinkDeclined");
const MatchList = z
  .object({
    matches: z.array(z.object({ matchId: z.string(), userId: z.string().openapi({ description: "The other person" }), createdAt: z.string(), profile: Card })),
    nextCursor: z.string().nullable(),
  })
  .openapi("MatchList");
const Page = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().max(128).optional(),
});
const WinkParams = z.object({ winkId: ResourceId });
const MatchParams = z.object({ matchId: ResourceId });

const json = <T extends z.ZodType>(schema: T, description: string) => ({ description, content: { "application/json": { schema } } });

function matching(c: Context<AppEnv>): MatchingContext {
  const { deps, db } = c.var;
  return { db, kv: deps.kv, ids: deps.ids, logger: deps.logger, now: deps.clock.now() };
}

const tierOf = async (c: Context<AppEnv>) => (await c.var.runtime.tierSource.tierOf(c.var.db, principalOf(c).userId)).tier;

export const matchingRoutes = createRouter()
  .openapi(
    protectedRoute("user", {
      method: "post",
      path: "/api/matching/swipe",
      tags: ["matching"],
      summary: "Swipe on a person: like, pass or wink",
      request: { body: jsonBody(SwipeInput) },
      responses: {
        200: json(SwipeResult, "Recorded; `matched` tells whether the two are now matched"),
        404: { description: "No such person (or a block stands between you)" },
        409: { description: "Already swiped on this person, or a wink to them is pending" },
      },
    }),
    async (c) => {
      const input = c.req.valid("json");
      const tier = input.action === "wink" ? await tierOf(c) : "standard";
      return c.json(await swipe(matching(c), principalOf(c).userId, input, tier), 200);
    },
  )
  .openapi(
    protectedRoute("user", {
      method: "post",
      path: "/api/v1/winks",
      tags: ["winks"],
      summary: "Send a wink (10 per UTC day on the free tier)",
      request: { body: jsonBody(WinkInput) },
      responses: {
        201: json(WinkSent, "Sent"),
        404: { description: "No such person (or a block stands between you)" },
        409: { description: "A wink to this person is still pending, or you are matched already" },
      },
    }),
    async (c) => c.json(await sendWink(matching(c), principalOf(c).userId, c.req.valid("json"), await tierOf(c)), 201),
  )
  .openapi(
    protectedRoute("user", {
      method: "get",
      path: "/api/v1/winks/received",
      tags: ["winks"],
      summary: "Pending winks to you (the badge), newest first",
      responses: { 200: json(ReceivedWinks, "Up to 100 pending winks, and how many are pending in all") },
    }),
    async (c) => c.json(await receivedWinks(matching(c), principalOf(c).userId), 200),
  )
  .openapi(
    protectedRoute("user", {
      method: "post",
      path: "/api/v1/winks/{winkId}/accept",
      tags: ["winks"],
      summary: "Accept a wink: creates a match",
      request: { params: WinkParams },
      responses: { 200: json(Accepted, "Accepted"), 404: { description: "No such wink to you" }, 409: { description: "The wink is no longer pending" } },
    }),
    async (c) => c.json(await acceptWink(matching(c), principalOf(c).userId, c.req.valid("param").winkId), 200),
  )
  .openapi(
    protectedRoute("user", {
      method: "post",
      path: "/api/v1/winks/{winkId}/decline",
      tags: ["winks"],
      summary: "Decline a wink",
      request: { params: WinkParams },
      responses: { 200: json(Declined, "Declined"), 404: { description: "No such wink to you" }, 409: { description: "The wink is no longer pending" } },
    }),
    async (c) => c.json(await declineWink(matching(c), principalOf(c).userId, c.req.valid("param").winkId), 200),
  )
  .openapi(
    protectedRoute("user", {
      method: "get",
      path: "/api/v1/matches",
      tags: ["matching"],
      summary: "Your current matches, newest first",
      request: { query: Page },
      responses: { 200: json(MatchList, "One page; pass `nextCursor` as `cursor` for the next") },
    }),
    async (c) => {
      const { limit, cursor } = c.req.valid("query");
      return c.json(await listMatches(matching(c), principalOf(c).userId, limit, cursor), 200);
    },
  )
  .openapi(
    protectedRoute("user", {
      method: "get",
      path: "/api/v1/matches/events",
      tags: ["matching"],
      summary: "Live match events (server-sent events)",
      description:
        "Events `match.created`, `wink.received`, `wink.accepted`, each with a numeric `id:` and JSON `data` whose `userId` is the other person. " +
        "Reconnect with `Last-Event-ID` (or `?lastEventId=`) to replay what was missed; without it the stream starts with the next event. " +
        "A `: heartbeat` comment comes at least every 20 s. " +
        "A person may hold 5 streams open at once (across instances); a sixth answers 429 `rate_limit_exceeded` with `retry_after`. " +
        "The stream ends at the access token's expiry, or soon after its API key is revoked: reconnect with a current credential.",
      request: {
        headers: z.object({ "last-event-id": z.string().optional() }),
        query: z.object({ lastEventId: z.string().optional() }),
      },
      responses: {
        200: { description: "The event stream", content: { "text/event-stream": { schema: z.string() } } },
        429: { description: "A rate limit exceeded, or already 5 open event streams for this person: see `retry_after`" },
      },
    }),
    // The route is declared like any other, so authentication, the rate limit and the access
    // log (written when the handler returns the streaming response) apply to it.
    (async (c: Context<AppEnv>) => matchEventStream(c, principalOf(c))) as never,
  )
  .openapi(
    protectedRoute("user", {
      method: "delete",
      path: "/api/v1/matches/{matchId}",
      tags: ["matching"],
      summary: "Unmatch: neither person sees the match any more",
      request: { params: MatchParams },
      responses: { 204: { description: "Unmatched" }, 404: { description: "No such match of yours" } },
    }),
    async (c) => {
      await unmatch(matching(c), principalOf(c).userId, c.req.valid("param").matchId);
      return c.body(null, 204);
    },
  );
