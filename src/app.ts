import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppDeps } from "./deps";
import type { AppEnv, Runtime } from "./http/env";
import { notFound, onError } from "./http/error-handler";
import { checkBodies, inSequence, requestContext } from "./http/middleware";
import { healthRoutes } from "./routes/health";
import { apiKeyRoutes } from "./routes/admin/api-keys";
import { authTestRoutes } from "./routes/auth/test";
import { observabilityRoutes } from "./routes/admin/observability";
import { coinAdminRoutes } from "./routes/admin/coins";
import { financeAdminRoutes } from "./routes/admin/finance";
import { auditRoutes } from "./routes/admin/audit";
import { regionRoutes } from "./routes/config/regions";
import { voucherRoutes } from "./routes/admin/vouchers";
import { subscriptionRoutes } from "./routes/subscriptions";
import { walletRoutes } from "./routes/wallet";
import { matchingRoutes } from "./routes/matching";
import { discoveryRoutes } from "./routes/discovery";
import { profileRoutes } from "./routes/profiles";
import { safetyRoutes } from "./routes/safety";
import { paymentRoutes } from "./routes/payments";
import { WEBHOOK_BODY_LIMITS, paymentWebhookRoutes } from "./routes/payments/webhooks";
import { kbRoutes } from "./routes/kb";
import { KB_FORM_PATHS, KB_BODY_LIMITS } from "./routes/kb/limits";
import { VOICE_PREFIX, voiceRoutes } from "./routes/voice";
import { AGENT_PATH, agentRoutes } from "./routes/agent";
import { createEventHub } from "./services/matching/event-hub";
import { createPerStreamDelivery } from "./services/matching/event-polling";
import { createEventStreams, HEARTBEAT_MS, POLL_MS } from "./services/matching/event-streams";
import { createLastUsedRecorder } from "./services/api-keys/keys";
import { cachedTierLookup } from "./services/tiers/port";
import { subscriptionTierLookup } from "./services/subscriptions/subscriptions";
import { createUserCache } from "./services/users/ensure-user";
import { createAccountStates } from "./services/account/states";
import { unitFrom } from "./platform/swr-cache";
import { inferenceFromConfig } from "./services/inference/from-config";
import { createKbRuntime } from "./services/kb/runtime";
import { agentsHostOnly } from "./http/agents-host";
import { serveOpenApiDocument } from "./http/openapi-document";
import { aiAgentRoutes } from "./routes/ai-agents";
import { partnerRoutes } from "./routes/partners";
import { partnerAdminRoutes } from "./routes/admin/partners";
import { messagingAdminRoutes } from "./routes/admin/messaging";
import { supportAdminRoutes } from "./routes/admin/support";
import { translationRoutes } from "./routes/translations";
import { accountRoutes } from "./routes/account";
import { workflowRoutes } from "./routes/workflows";
import { workflowRunRoutes } from "./routes/workflows/runs";
import { accountDeletionRoutes } from "./routes/account/deletion";
import { DOCS_PATH, REFERENCE_SCRIPT_PATH, docsRoutes } from "./routes/docs";

export const OPENAPI_PATH = "/openapi.json";
/** Served for people and tools, not part of the API the document describes. */
export const UNDOCUMENTED_PATHS: ReadonlySet<string> = new Set([OPENAPI_PATH, DOCS_PATH, REFERENCE_SCRIPT_PATH]);

/**
 * The one factory. The Workers entry, the Node entry and the tests all build the app here from
 * their own deps; nothing in the app reaches for globals, env or runtime modules.
 */
export function createApp(deps: AppDeps): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>();
  const now = () => deps.clock.now();
  const random = unitFrom((n) => deps.random.bytes(n));
  const tierSource = deps.tierLookup ?? subscriptionTierLookup(deps.clock);
  const runtime: Runtime = {
    tierSource,
    users: createUserCache({ now, random }),
    accounts: createAccountStates(),
    lastUsed: createLastUsedRecorder(),
    tiers: cachedTierLookup(tierSource, { now, random, kv: deps.kv, logger: deps.logger }),
    metrics: { rateLimitFailOpen: 0 },
    inference: deps.inference ?? inferenceFromConfig(deps.config, deps),
    kb: createKbRuntime(deps),
    // Created idle: it subscribes and reads only once a stream is open.
    events: createEventStreams({
      database: deps.database,
      logger: deps.logger,
      // One shared dispatcher where the store can subscribe and sessions share one pool (Node);
      // elsewhere (Workers: Upstash cannot subscribe, I/O belongs to its request, each stream
      // needs a session of its own) every stream reads on its own.
      delivery:
        deps.kv.subscribe && deps.database.driver !== "neon"
          ? createEventHub({ kv: deps.kv, db: () => deps.database.session().db, logger: deps.logger, heartbeatMs: HEARTBEAT_MS, pollMs: POLL_MS })
          : createPerStreamDelivery({ kv: deps.kv, logger: deps.logger, heartbeatMs: HEARTBEAT_MS, pollMs: POLL_MS }),
    }),
  };
  deps.stopping?.addEventListener(
    "abort",
    () => runtime.events.closeAll(),
    { once: true },
  );

  const bodies = checkBodies({
    limits: [...KB_BODY_LIMITS, ...WEBHOOK_BODY_LIMITS, { prefix: VOICE_PREFIX, maxBytes: deps.config.VOICE_MAX_BODY_BYTES, stream: true }],
    formPaths: [...KB_FORM_PATHS],
    // The platform agent's payload is its own: passed on in whatever type the client gave it.
    anyTypePaths: [VOICE_PREFIX, AGENT_PATH],
  });
  const agentsHost = deps.config.AGENTS_HOST ? agentsHostOnly(deps.config.AGENTS_HOST) : undefined;
  const context = requestContext(deps, runtime, agentsHost ? inSequence(agentsHost, bodies) : bodies);
  app.use("*", context);

  app.route("/", healthRoutes);
  app.route("/", authTestRoutes);
  app.route("/", apiKeyRoutes);
  app.route("/", observabilityRoutes);
  app.route("/", walletRoutes);
  app.route("/", subscriptionRoutes);
  app.route("/", coinAdminRoutes);
  app.route("/", financeAdminRoutes);
  app.route("/", auditRoutes);
  app.route("/", regionRoutes);
  app.route("/", voucherRoutes);
  app.route("/", matchingRoutes);
  app.route("/", discoveryRoutes);
  app.route("/", profileRoutes);
  app.route("/", safetyRoutes);
  app.route("/", accountDeletionRoutes);
  app.route("/", paymentRoutes);
  app.route("/", paymentWebhookRoutes);
  app.route("/", kbRoutes);
  app.route("/", workflowRoutes);
  app.route("/", workflowRunRoutes);
  app.route("/", voiceRoutes);
  app.route("/", agentRoutes);
  app.route("/", partnerRoutes);
  app.route("/", partnerAdminRoutes);
  app.route("/", messagingAdminRoutes);
  app.route("/", supportAdminRoutes);
  app.route("/", aiAgentRoutes);
  app.route("/", translationRoutes);
  app.route("/", accountRoutes);

  app.openAPIRegistry.registerComponent("securitySchemes", "bearer", {
    type: "http",
    scheme: "bearer",
    description: "An OpenID Connect access token (JWT) or a 64-hex admin API key.",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "observabilityToken", {
    type: "apiKey",
    in: "header",
    name: "X-Observability-Token",
  });
  serveOpenApiDocument(app, OPENAPI_PATH, { title: "Dating and Social Platform API", version: deps.config.APP_VERSION });
  app.route("/", docsRoutes(OPENAPI_PATH, deps.apiReferenceScript));

  app.notFound(notFound);
  app.onError(onError);
  return app;
}

export type App = ReturnType<typeof createApp>;
