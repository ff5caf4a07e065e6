import type { Context } from "hono";
import type { AppDeps } from "../../deps";
import type { AppEnv } from "../../http/env";
import { createDohResolver } from "../../services/kb/url-fetch";
import type { PartnerContext } from "../../services/partners/profile";

export function partnerGuard(deps: AppDeps): Pick<PartnerContext, "resolver" | "allowedHosts" | "production"> {
  return { resolver: deps.resolver ?? createDohResolver(deps.fetch), allowedHosts: deps.webhookAllowedHosts, production: deps.config.NODE_ENV === "production" };
}

export function partnerContext(c: Context<AppEnv>): PartnerContext {
  const deps = c.var.deps;
  return { db: c.var.db, ids: deps.ids, random: deps.random, now: deps.clock.now(), requestId: c.var.requestId, dispatch: deps.outboxDispatch, ...partnerGuard(deps) };
}
