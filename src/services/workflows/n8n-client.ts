import { ApiError } from "../../errors";
import type { N8nWorkflow } from "./compile";

/** n8n's public REST API, only what sync needs. Every failure becomes a 502 carrying the engine's message. */
export interface N8nClient {
  create(body: N8nWorkflow): Promise<{ id: string }>;
  replace(id: string, body: N8nWorkflow): Promise<{ id: string }>;
  activate(id: string): Promise<void>;
}

const TIMEOUT_MS = 15_000;

export function createN8nClient(o: { url: string; apiKey: string; fetch: typeof fetch }): N8nClient {
  const base = `${o.url.replace(/\/+$/, "")}/api/v1`;
  async function call(method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
    let res: Response;
    try {
      res = await o.fetch(`${base}${path}`, {
        method,
        headers: { "X-N8N-API-KEY": o.apiKey, accept: "application/json", ...(body === undefined ? {} : { "content-type": "application/json" }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (cause) {
      throw new ApiError("provider_error", "the automation engine (n8n) could not be reached", { details: [{ path: "engine", message: cause instanceof Error ? cause.message : String(cause) }], cause });
    }
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : {};
    } catch {
      parsed = undefined;
    }
    if (!res.ok) {
      const message = typeof (parsed as { message?: unknown })?.message === "string" ? (parsed as { message: string }).message : `HTTP ${res.status}`;
      throw new ApiError("provider_error", "the automation engine (n8n) refused the request", { details: [{ path: "engine", message: `${method} ${path}: ${message}`.slice(0, 1000) }] });
    }
    if (typeof parsed !== "object" || parsed === null) throw new ApiError("provider_error", "the automation engine (n8n) answered something other than JSON", { details: [{ path: "engine", message: `${method} ${path}` }] });
    return parsed as Record<string, unknown>;
  }
  const idOf = (r: Record<string, unknown>) => {
    if (typeof r.id !== "string" || r.id === "") throw new ApiError("provider_error", "the automation engine (n8n) answered without a workflow id", { details: [{ path: "engine", message: "missing id" }] });
    return { id: r.id };
  };
  return {
    create: async (body) => idOf(await call("POST", "/workflows", body)),
    replace: async (id, body) => idOf(await call("PUT", `/workflows/${encodeURIComponent(id)}`, body)),
    activate: async (id) => void (await call("POST", `/workflows/${encodeURIComponent(id)}/activate`)),
  };
}
