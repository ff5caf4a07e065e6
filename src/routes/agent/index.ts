import { z } from "@hono/zod-openapi";
import { ApiError } from "../../errors";
import { principalOf } from "../../http/auth";
import { createRouter } from "../../http/router";
import { protectedRoute } from "../../http/routes";
import { callPlatformAgent } from "../../services/platform-agent/proxy";

export const AGENT_PATH = "/api/agent";

// Declared as any type only: a JSON media type here would make the validator read the body, and
// it must stream through untouched (the agent's payload is its own, usually JSON).
const Passed = z.string().openapi({ format: "binary", description: "The platform agent's own payload, passed through" });

const agentRoute = protectedRoute("user", {
  method: "post",
  path: AGENT_PATH,
  tags: ["platform agent"],
  summary: "One call to the platform agent (native clients; browsers use the web app's /api/agent)",
  description:
    "The body streams to the platform agent with the caller's access token as its bearer; the agent's answer streams back with its status and Content-Type (server-sent events pass through as they arrive). A caller that hangs up cancels the agent call. Admin API keys are refused: the agent is given the caller's own token.",
  request: { body: { required: false, description: "Passed through to the platform agent", content: { "*/*": { schema: Passed } } } },
  responses: {
    200: { description: "The platform agent's answer, streamed", content: { "text/event-stream": { schema: Passed }, "application/json": { schema: Passed } } },
    403: { description: "An admin API key: the agent takes a member's own access token" },
    503: { description: "The platform agent is not configured, unreachable, too slow or failing" },
  },
});

export const agentRoutes = createRouter();
agentRoutes.openapi(agentRoute, async (c) => {
  const principal = principalOf(c);
  // A key stays with us: the agent is an outside party and checks the member's token itself.
  if (principal.credential !== "token") throw new ApiError("forbidden", "the platform agent takes a signed-in member's access token, not an API key");
  const deps = c.var.deps;
  const raw = c.req.raw;
  const token = (c.req.header("authorization") ?? "").trim().replace(/^Bearer +/i, "");
  const answer = await callPlatformAgent(
    { url: deps.config.PLATFORM_AGENT_URL, fetch: deps.fetch, logger: deps.logger, timeoutMs: deps.config.PLATFORM_AGENT_TIMEOUT_MS },
    { accessToken: token, headers: raw.headers, body: raw.body, requestId: c.var.requestId, signal: raw.signal },
  );
  const status = answer.status as 200;
  return answer.body ? c.body(answer.body, status, answer.headers) : c.body(null, status, answer.headers);
});
