import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppDeps } from "./deps";
import type { AppEnv } from "./http/env";
import { notFound, onError } from "./http/error-handler";
import { limitBodies, requestContext, requireJsonBodies } from "./http/middleware";
import { healthRoutes } from "./routes/health";

export const OPENAPI_PATH = "/openapi.json";

/**
 * The one factory. The Workers entry, the Node entry and the tests all build the app here from
 * their own deps; nothing in the app reaches for globals, env or runtime modules.
 */
export function createApp(deps: AppDeps): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>();

  app.use("*", requestContext(deps));
  app.use("*", limitBodies());
  app.use("*", requireJsonBodies());

  app.route("/", healthRoutes);

  app.openAPIRegistry.registerComponent("securitySchemes", "bearer", {
    type: "http",
    scheme: "bearer",
    description: "An OpenID Connect access token (JWT) or a 64-hex admin API key.",
  });
  app.doc31(OPENAPI_PATH, {
    openapi: "3.1.0",
    info: { title: "Dating and Social Platform API", version: deps.config.APP_VERSION },
    security: [{ bearer: [] }],
  });

  app.notFound(notFound);
  app.onError(onError);
  return app;
}

export type App = ReturnType<typeof createApp>;
