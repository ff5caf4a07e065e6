import { BODY_METHODS } from "../http/middleware";

/**
 * HTTP/1.1 frames a request body with Content-Length or Transfer-Encoding; without either there is
 * none. @hono/node-server still hands every request other than GET and HEAD a body stream (an
 * empty one), which the app cannot tell from a real body: a DELETE or a body-less POST would be
 * refused for its missing Content-Type. Such a request reaches the app without a body, as it
 * would on Workers.
 */
export function withoutUnframedBody(req: Request): Request {
  // Only the methods the app reads bodies of: rebuilding a TRACE (which fetch's Request refuses
  // to construct) answered 500 with no body.
  if (!BODY_METHODS.has(req.method) || req.headers.has("transfer-encoding")) return req;
  const length = req.headers.get("content-length");
  if (length !== null && length.trim() !== "0") return req;
  return new Request(req.url, { method: req.method, headers: req.headers, signal: req.signal });
}
