/**
 * The checks n8n's public API applies to a workflow body (packages/cli/src/public-api/v1/handlers/
 * workflows/spec/schemas/workflow.yml): required name, nodes, connections and settings; no other
 * top-level field (read-only ones such as id, active, tags included); nodes with their required
 * fields; settings with known keys only. Added here: what the engine needs to load the workflow
 * (unique node names, connections between existing names, a webhook with a method and path).
 */
const TOP = ["name", "nodes", "connections", "settings", "staticData"];
const NODE = ["id", "name", "type", "typeVersion", "position", "parameters", "credentials", "webhookId", "disabled", "notes", "notesInFlow", "executeOnce", "alwaysOutputData", "retryOnFail", "maxTries", "waitBetweenTries", "onError", "continueOnFail"];
const SETTINGS = ["saveExecutionProgress", "saveManualExecutions", "saveDataErrorExecution", "saveDataSuccessExecution", "executionTimeout", "errorWorkflow", "timezone", "executionOrder", "callerPolicy", "callerIds", "timeSavedPerExecution"];

export function n8nWorkflowProblems(body: unknown): string[] {
  const problems: string[] = [];
  if (typeof body !== "object" || body === null || Array.isArray(body)) return ["request/body must be object"];
  const b = body as Record<string, unknown>;
  for (const key of ["name", "nodes", "connections", "settings"]) if (!(key in b)) problems.push(`request/body must have required property '${key}'`);
  for (const key of Object.keys(b)) if (!TOP.includes(key)) problems.push(`request/body must NOT have additional properties ('${key}')`);
  if (typeof b.name !== "string" || b.name === "") problems.push("request/body/name must be string");
  const nodes = Array.isArray(b.nodes) ? (b.nodes as Record<string, unknown>[]) : [];
  if (!Array.isArray(b.nodes)) problems.push("request/body/nodes must be array");
  const names = new Set<string>();
  for (const [i, n] of nodes.entries()) {
    for (const key of ["name", "type", "typeVersion", "position", "parameters"]) if (!(key in n)) problems.push(`nodes/${i} must have required property '${key}'`);
    for (const key of Object.keys(n)) if (!NODE.includes(key)) problems.push(`nodes/${i} must NOT have additional properties ('${key}')`);
    if (!Array.isArray(n.position) || n.position.length !== 2 || !n.position.every((v) => typeof v === "number")) problems.push(`nodes/${i}/position must be [x, y]`);
    if (typeof n.name === "string") {
      if (names.has(n.name)) problems.push(`duplicate node name '${n.name}'`);
      names.add(n.name);
    }
    if (n.credentials !== undefined) {
      for (const [type, ref] of Object.entries(n.credentials as Record<string, unknown>)) {
        const r = ref as Record<string, unknown>;
        if (typeof r.name !== "string" || Object.keys(r).some((k) => k !== "id" && k !== "name")) problems.push(`nodes/${i}/credentials/${type} must be {id?, name}`);
      }
    }
    if (n.type === "n8n-nodes-base.webhook") {
      const p = n.parameters as Record<string, unknown>;
      if (typeof p.path !== "string" || p.path === "" || typeof p.httpMethod !== "string") problems.push(`nodes/${i} webhook needs httpMethod and path`);
    }
  }
  const connections = (typeof b.connections === "object" && b.connections !== null ? b.connections : {}) as Record<string, { main?: { node: string; type: string; index: number }[][] }>;
  for (const [from, outputs] of Object.entries(connections)) {
    if (!names.has(from)) problems.push(`connections: no node named '${from}'`);
    for (const list of outputs.main ?? []) for (const c of list) if (!names.has(c.node) || c.type !== "main" || !Number.isInteger(c.index)) problems.push(`connections/${from}: bad target '${c.node}'`);
  }
  const settings = (typeof b.settings === "object" && b.settings !== null ? b.settings : {}) as Record<string, unknown>;
  for (const key of Object.keys(settings)) if (!SETTINGS.includes(key)) problems.push(`request/body/settings must NOT have additional properties ('${key}')`);
  if (settings.executionOrder !== undefined && settings.executionOrder !== "v0" && settings.executionOrder !== "v1") problems.push("settings/executionOrder must be v0 or v1");
  return problems;
}
