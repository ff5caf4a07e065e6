import type { Context, MiddlewareHandler } from "hono";
import { IssuerUnavailable, TokenRejected } from "../auth/tokens";
import type { Principal, Role } from "../auth/principal";
import { ApiError } from "../errors";
import { KEY_PATTERN, ROTATE_AFTER_MS, checkApiKey } from "../services/api-keys/keys";
import { ensureUser } from "../services/users/ensure-user";
import type { AppEnv } from "./env";
import { deferOnSession } from "./defer";

const BEARER = /^Bearer +([A-Za-z0-9._~+/=-]+)$/i;

function unauthorized(message: "missing key" | "invalid key" | "invalid or missing key" | "key expired"): ApiError {
  return new ApiError("unauthorized", message, { headers: { "WWW-Authenticate": 'Bearer realm="api"' } });
}

/**
 * Resolves the caller from `Authorization: Bearer …`: a 64-hex value is an admin API key, anything
 * else must be an access token from the configured issuer. Failures say as little as the spec's
 * messages allow; the precise reason goes to the log only.
 */
export const authenticate: MiddlewareHandler<AppEnv> = (c, next) => identify(c, next, false);

/**
 * {@link authenticate} for the one route a deleted account may still call (its restore): every
 * other route answers such a caller 403 account_deleted.
 */
export const authenticateDeletedToo: MiddlewareHandler<AppEnv> = (c, next) => identify(c, next, true);

async function identify(c: Context<AppEnv>, next: () => Promise<void>, deletedToo: boolean): Promise<void> {
  const principal = await asAccessLayer(c, async () => {
    const header = c.req.header("authorization");
    if (header === undefined || header.trim() === "") throw unauthorized("missing key");
    const credential = BEARER.exec(header.trim())?.[1];
    if (!credential) throw unauthorized("invalid or missing key");
    const found = await (KEY_PATTERN.test(credential) ? fromApiKey(c, credential) : fromToken(c, credential));
    if (found.deletedAt !== undefined && !deletedToo) throw new ApiError("account_deleted");
    return found;
  });
  if (deletedToo) c.set("deletedToo", true);
  c.set("principal", principal);
  c.set("userId", principal.userId);
  await next();
}

async function fromToken(c: Context<AppEnv>, token: string): Promise<Principal> {
  // c.get, not c.var: Hono builds a fresh object of every variable on each c.var read.
  const [deps, runtime, db] = [c.get("deps"), c.get("runtime"), c.get("db")];
  let verified;
  try {
    verified = await deps.tokenVerifier.verify(token);
  } catch (err) {
    if (err instanceof IssuerUnavailable) {
      deps.logger.error("identity provider unavailable", { requestId: c.get("requestId"), reason: err.reason });
      throw new ApiError("service_unavailable", "the identity provider cannot be reached; retry shortly");
    }
    if (!(err instanceof TokenRejected)) throw err;
    deps.logger.info("token rejected", { requestId: c.var.requestId, reason: err.reason });
    throw unauthorized("invalid or missing key");
  }
  const claimed: Role = verified.roles.includes("admin") ? "admin" : "user";
  const user = await runtime.users.resolve(
    verified,
    claimed,
    () =>
      ensureUser(db, {
        subject: verified.subject,
        email: verified.email,
        role: claimed,
        issuedAt: new Date(verified.issuedAt),
        newId: deps.ids.next("usr"),
        now: new Date(deps.clock.now()),
      }),
    (work) => deferOnSession(c, work, "identity refresh"),
  );
  // The stored role, set by the newest token: an older token's claim does not count.
  const principal: Principal = { userId: user.id, email: user.email, role: user.role, credential: "token", expiresAt: verified.expiresAt };
  // What this instance itself deleted or restored wins over a remembered identity.
  const deletedAt = runtime.accounts.deletedAt(user.id, user.deletedAt, deps.clock.now());
  if (deletedAt !== null) principal.deletedAt = deletedAt;
  return principal;
}

const ROTATE_WARNING = '299 - "This API key is older than 90 days; generate a new key and delete this one"';

async function fromApiKey(c: Context<AppEnv>, key: string): Promise<Principal> {
  const { deps, runtime, db } = c.var;
  const now = deps.clock.now();
  const check = await checkApiKey(db, key, now);
  if (!check.ok) throw unauthorized(check.reason === "expired" ? "key expired" : "invalid key");
  if (now - check.createdAt > ROTATE_AFTER_MS) {
    c.header("Warning", ROTATE_WARNING);
    c.set("answerHeaders", { ...c.get("answerHeaders"), Warning: ROTATE_WARNING });
  }
  if (runtime.lastUsed.due(check.keyId, now)) {
    deferOnSession(c, runtime.lastUsed.write(db, check.keyId, now), "api key last-used update");
  }
  const principal: Principal = { userId: check.userId, email: check.email, role: "admin", credential: "api_key", keyId: check.keyId };
  if (check.expiresAt !== null) principal.expiresAt = check.expiresAt;
  if (check.deletedAt !== null) principal.deletedAt = check.deletedAt;
  return principal;
}

/**
 * Runs a step of the authentication and rate-limit layer. Whatever it throws is that layer's
 * answer, which is shape 1 on every route (error-handler.ts), whatever shape the route's own
 * errors take.
 */
export async function asAccessLayer<T>(c: Context<AppEnv>, step: () => T | Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    c.set("refusedBy", "access");
    throw err;
  }
}

export const adminOnly: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (principalOf(c).role !== "admin") throw new ApiError("forbidden", "admin role required");
  await next();
};

export function principalOf(c: Context<AppEnv>): Principal {
  const principal = c.get("principal");
  if (!principal) throw new Error("route reached without authentication middleware");
  return principal;
}
