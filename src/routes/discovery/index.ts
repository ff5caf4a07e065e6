import { ProfileCardSchema } from "../profiles/card-schema";
import { z } from "@hono/zod-openapi";
import { principalOf } from "../../http/auth";
import { createRouter } from "../../http/router";
import { protectedRoute } from "../../http/routes";
import { discover } from "../../services/discovery/feed";

const DiscoverQuery = z.object({
  limit: z.coerce.number().int().min(1).max(50).default(20),
  cursor: z.string().max(200).optional().openapi({ description: "The nextCursor of the previous page; omit it to start a new feed session" }),
});

const DiscoverPage = z
  .object({
    // No fit score: it moves with the exact distance and would give away where someone is.
    profiles: z.array(ProfileCardSchema),
    nextCursor: z.string().nullable().openapi({ description: "Null once this feed session is exhausted; then start a new one" }),
  })
  .openapi("DiscoverPage");

const json = <T extends z.ZodType>(schema: T, description: string) => ({ description, content: { "application/json": { schema } } });

export const discoveryRoutes = createRouter().openapi(
  protectedRoute("user", {
    method: "get",
    path: "/api/v1/profiles/discover",
    tags: ["discovery"],
    summary: "Swipe cards for the caller, best mutual fit first",
    description:
      "Only people who fit the caller's wishes and whose wishes the caller fits (gender, age, distance), never anyone already swiped, matched, blocked or reported either way, or hidden. " +
      "The first page opens a feed session (30 minutes); its cursor pages through that snapshot, so a card never repeats within a session. " +
      "Without positions on either side, the same country stands in for distance. A hidden caller gets an empty feed.",
    request: { query: DiscoverQuery },
    responses: {
      200: json(DiscoverPage, "One page of cards"),
      404: { description: "The caller has no profile yet (not_found, \"create your profile first\")" },
    },
  }),
  async (c) => {
    const { limit, cursor } = c.req.valid("query");
    const deps = c.var.deps;
    const now = deps.clock.now();
    const page = await discover({ db: c.var.db, kv: deps.kv, random: deps.random, now }, principalOf(c).userId, { limit, cursor });
    return c.json(page, 200);
  },
);
