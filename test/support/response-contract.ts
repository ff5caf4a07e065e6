import type { OpenAPIHono } from "@hono/zod-openapi";
import type { z } from "zod";

interface Contract {
  method: string;
  template: string;
  pattern: RegExp;
  schemas: Map<number, z.ZodType>;
  /** Every documented status, with or without a JSON body. */
  statuses: Set<number>;
}

/**
 * The documented answers of every route of an app, from the same registry its OpenAPI document is
 * generated from: per route, the zod schema of each status's JSON body.
 */
export function responseContracts(app: OpenAPIHono<any>): Contract[] {
  const contracts: Contract[] = [];
  for (const definition of app.openAPIRegistry.definitions) {
    if (definition.type !== "route") continue;
    const { method, path, responses } = definition.route;
    const schemas = new Map<number, z.ZodType>();
    const statuses = new Set(Object.keys(responses ?? {}).map(Number));
    for (const [status, response] of Object.entries(responses ?? {})) {
      const schema = (response as { content?: Record<string, { schema?: unknown }> }).content?.["application/json"]?.schema;
      if (schema && typeof (schema as z.ZodType).safeParse === "function") schemas.set(Number(status), schema as z.ZodType);
    }
    const pattern = new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{[^}]+\}/g, "[^/]+")}$`);
    contracts.push({ method: method.toUpperCase(), template: path, pattern, schemas, statuses });
  }
  // In registration order, as Hono tries them: the first route whose pattern matches answers.
  return contracts;
}

/**
 * Fails when a JSON answer of a documented status does not match the schema the OpenAPI document
 * promises for it, or carries a field that schema does not name, or when any answer of a
 * documented status lacks a header the document declares required, so every test that calls the
 * API also checks the document against the code.
 */
export async function checkResponse(contracts: Contract[], method: string, path: string, res: Response): Promise<void> {
  const pathname = new URL(path, "http://api.test").pathname;
  const contract = contracts.find((c) => c.method === method.toUpperCase() && c.pattern.test(pathname));
  // The headers the document declares required on every answer (src/http/openapi-document.ts).
  if (contract?.statuses.has(res.status)) {
    const missing = [["X-Request-Id", true], ["Retry-After", res.status === 429]].filter(([name, due]) => due && !res.headers.has(name as string)).map(([name]) => name);
    if (missing.length) throw new Error(`${method.toUpperCase()} ${contract.template} answered ${res.status} without its documented ${missing.join(", ")}`);
  }
  if (!(res.headers.get("content-type") ?? "").includes("application/json")) return;
  const schema = contract?.schemas.get(res.status);
  if (!contract || !schema) return;
  const body: unknown = await res.clone().json();
  const result = schema.safeParse(body);
  const answered = `${method.toUpperCase()} ${contract.template} answered ${res.status}`;
  if (!result.success) {
    const issues = result.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ");
    throw new Error(`${answered} with a body its documented schema refuses: ${issues}\n${JSON.stringify(body).slice(0, 500)}`);
  }
  // zod drops keys a schema does not name; a key that did not survive is undocumented.
  const extra = extraKeys(body, result.data, "");
  if (extra.length) throw new Error(`${answered} with fields its documented schema does not name: ${extra.join(", ")}`);
}

/** Keys of the answer (at any depth) that the parsed copy lost. */
function extraKeys(given: unknown, parsed: unknown, at: string): string[] {
  if (Array.isArray(given) && Array.isArray(parsed)) return given.flatMap((g, i) => extraKeys(g, parsed[i], `${at}[${i}]`));
  if (given && typeof given === "object" && parsed && typeof parsed === "object" && !Array.isArray(given)) {
    return Object.keys(given).flatMap((k) => (k in (parsed as object) ? extraKeys((given as Record<string, unknown>)[k], (parsed as Record<string, unknown>)[k], `${at}.${k}`) : [`${at}.${k}`]));
  }
  return [];
}
