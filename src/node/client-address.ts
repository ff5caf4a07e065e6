import type { AppDeps } from "../deps";
import { addressBehindProxies } from "../http/client-address";

/** What @hono/node-server passes as the app's env: the request and response it adapts. */
type NodeBindings = { incoming?: { socket?: { remoteAddress?: string } } } | undefined;

/**
 * The Node entry's deps.clientAddress: the socket's peer, or with `trustedProxyHops` reverse
 * proxies in front (TRUSTED_PROXY_HOPS), the X-Forwarded-For entry the outermost of them wrote.
 * Without the setting every client behind a proxy would share the proxy's address and its limits.
 */
export function nodeClientAddress(trustedProxyHops: number): NonNullable<AppDeps["clientAddress"]> {
  return (request, env) => addressBehindProxies((env as NodeBindings)?.incoming?.socket?.remoteAddress, request.headers.get("x-forwarded-for"), trustedProxyHops);
}
