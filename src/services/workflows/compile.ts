import type { Channel, ConditionOp, WorkflowGraph, WorkflowNode } from "./graph";

/**
 * The graph as n8n's public API takes a workflow body: `{name, nodes, connections, settings}` and
 * nothing else (n8n refuses unknown and read-only fields such as `id`, `active`, `tags`).
 */
export interface N8nNode {
  id: string;
  name: string;
  type: string;
  typeVersion: number;
  position: [number, number];
  parameters: Record<string, unknown>;
  credentials?: Record<string, { name: string }>;
  onError?: "continueRegularOutput";
}
export type N8nConnections = Record<string, { main: { node: string; type: "main"; index: number }[][] }>;
export interface N8nWorkflow {
  name: string;
  nodes: N8nNode[];
  connections: N8nConnections;
  settings: { executionOrder: "v1" };
}

/** Where messages go; credentials are named, never inlined, and live in the engine. */
export interface CompileOptions {
  /** Base URL of the push/SMS/in-app gateway; each channel posts to `<base>/<channel>`. */
  gatewayUrl?: string;
  gatewayCredential: string;
  smtpCredential: string;
  emailFrom?: string;
}

export const WEBHOOK_NODE = "Webhook";
export const STATUS_NODE = "Report status";
/** What the run was handed (runId, workflowId, input, statusUrl, callbackToken): the webhook's body. */
const RUN = `$('${WEBHOOK_NODE}').item.json.body`;

const OPERATION: Record<ConditionOp, string> = { equals: "equals", not_equals: "notEquals", contains: "contains", gt: "gt", lt: "lt" };

/**
 * A JavaScript string literal that is safe inside an n8n `{{ }}` expression: braces are escaped so
 * text an admin wrote can never close the expression or open another.
 */
function literal(text: string): string {
  return JSON.stringify(text).replace(/[{}]/g, (c) => (c === "{" ? "\\u007b" : "\\u007d"));
}

/** `Hi {{displayName}}` → `"Hi " + (input.displayName ?? "")`, evaluated by the engine per run. */
function templateExpression(template: string): string {
  const parts: string[] = [];
  let last = 0;
  for (const m of template.matchAll(/\{\{\s*([A-Za-z]+)\s*\}\}/g)) {
    if (m.index > last) parts.push(literal(template.slice(last, m.index)));
    parts.push(`String(${RUN}.input?.${m[1]} ?? "")`);
    last = m.index + m[0].length;
  }
  if (last < template.length || parts.length === 0) parts.push(literal(template.slice(last)));
  return parts.join(" + ");
}

const json = (fields: Record<string, string>) => `={{ JSON.stringify({ ${Object.entries(fields).map(([k, v]) => `${k}: ${v}`).join(", ")} }) }}`;

function nodeName(node: WorkflowNode): string {
  switch (node.type) {
    case "trigger": return WEBHOOK_NODE;
    case "send_message": return `Send ${node.data.channel} · ${node.id}`;
    case "delay": return `Wait · ${node.id}`;
    case "condition": return `If · ${node.id}`;
  }
}

function messageNode(node: Extract<WorkflowNode, { type: "send_message" }>, o: CompileOptions): Omit<N8nNode, "id" | "name" | "position"> {
  const text = templateExpression(node.data.template);
  if (node.data.channel === "email") {
    return {
      type: "n8n-nodes-base.emailSend",
      typeVersion: 2.1,
      parameters: {
        fromEmail: o.emailFrom ?? "",
        toEmail: `={{ ${RUN}.input.email }}`,
        subject: node.data.subject ?? "",
        emailFormat: "text",
        text: `={{ ${text} }}`,
        options: {},
      },
      credentials: { smtp: { name: o.smtpCredential } },
    };
  }
  const channel: Channel = node.data.channel;
  return {
    type: "n8n-nodes-base.httpRequest",
    typeVersion: 4.2,
    parameters: {
      method: "POST",
      url: o.gatewayUrl ? `${o.gatewayUrl.replace(/\/+$/, "")}/${channel}` : "",
      authentication: "genericCredentialType",
      genericAuthType: "httpHeaderAuth",
      sendBody: true,
      specifyBody: "json",
      jsonBody: json({ runId: `${RUN}.runId`, nodeId: literal(node.id), channel: literal(channel), userId: `${RUN}.input?.userId ?? null`, text }),
      options: {},
    },
    credentials: { httpHeaderAuth: { name: o.gatewayCredential } },
  };
}

function conditionNode(node: Extract<WorkflowNode, { type: "condition" }>): Omit<N8nNode, "id" | "name" | "position"> {
  const { field, op, value } = node.data;
  const type = op === "gt" || op === "lt" ? "number" : op === "contains" ? "string" : typeof value;
  return {
    type: "n8n-nodes-base.if",
    typeVersion: 2,
    parameters: {
      conditions: {
        options: { caseSensitive: true, leftValue: "", typeValidation: "loose" },
        conditions: [{ id: node.id, leftValue: `={{ ${RUN}.${field} }}`, rightValue: value, operator: { type, operation: OPERATION[op] } }],
        combinator: "and",
      },
      options: {},
    },
  };
}

function compileNode(node: WorkflowNode, workflowId: string, o: CompileOptions): Omit<N8nNode, "id" | "name" | "position"> {
  switch (node.type) {
    case "trigger":
      // Whatever the platform event, the platform decides when to run: it calls this webhook.
      return { type: "n8n-nodes-base.webhook", typeVersion: 2, parameters: { httpMethod: "POST", path: workflowId, responseMode: "onReceived", options: {} } };
    case "send_message":
      // A failed message must not stop the run: the status report names it as failed.
      return { ...messageNode(node, o), onError: "continueRegularOutput" };
    case "delay":
      return { type: "n8n-nodes-base.wait", typeVersion: 1.1, parameters: { resume: "timeInterval", amount: node.data.minutes, unit: "minutes" } };
    case "condition":
      return conditionNode(node);
  }
}

/**
 * One outcome per message node that ran, read from that node's output: the gateway answers
 * `{route?, status?, latencyMs?}`; a node that failed (it continues on error) carries `error`.
 */
function deliveryExpression(node: Extract<WorkflowNode, { type: "send_message" }>): string {
  const ref = `$(${literal(nodeName(node))})`;
  const out = `${ref}.item.json`;
  const route = node.data.channel === "email" ? `"smtp"` : `(${out}.route ?? ${literal(node.data.channel)})`;
  const fields = `nodeId: ${literal(node.id)}, channel: ${literal(node.data.channel)}, route: ${route}, status: (${out}.error ? "failed" : (${out}.status ?? "sent")), latencyMs: (${out}.latencyMs ?? null)`;
  return `...(${ref}.isExecuted ? [{ ${fields} }] : [])`;
}

function statusNode(graph: WorkflowGraph): Omit<N8nNode, "id" | "position"> {
  const sends = graph.nodes.flatMap((n) => (n.type === "send_message" ? [deliveryExpression(n)] : []));
  return {
    name: STATUS_NODE,
    type: "n8n-nodes-base.httpRequest",
    typeVersion: 4.2,
    parameters: {
      method: "POST",
      url: `={{ ${RUN}.statusUrl }}`,
      sendHeaders: true,
      headerParameters: { parameters: [{ name: "Authorization", value: `=Bearer {{ ${RUN}.callbackToken }}` }] },
      sendBody: true,
      specifyBody: "json",
      jsonBody: json({ runId: `${RUN}.runId`, status: `"succeeded"`, finishedAt: "$now.toISO()", deliveries: `[${sends.join(", ")}]` }),
      options: {},
    },
  };
}

/**
 * Compiles a valid graph (graph.ts) to n8n workflow JSON. Pure and deterministic, so drafts compile
 * without an engine and the same graph always yields the same body.
 */
export function compileWorkflow(workflowId: string, name: string, graph: WorkflowGraph, o: CompileOptions): N8nWorkflow {
  const byId = new Map(graph.nodes.map((n) => [n.id, n]));
  const trigger = graph.nodes.find((n) => n.type === "trigger");
  // Columns by distance from the trigger, so the engine's editor shows the flow left to right.
  const depth = new Map<string, number>(trigger ? [[trigger.id, 0]] : []);
  const queue = trigger ? [trigger.id] : [];
  for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
    for (const e of graph.edges) if (e.source === id && !depth.has(e.target)) (depth.set(e.target, (depth.get(id) ?? 0) + 1), queue.push(e.target));
  }
  const rows = new Map<number, number>();
  const place = (col: number): [number, number] => {
    const row = rows.get(col) ?? 0;
    rows.set(col, row + 1);
    return [col * 260, row * 160];
  };

  const nodes: N8nNode[] = graph.nodes.map((n) => ({ id: `${workflowId}-${n.id}`, name: nodeName(n), position: place(depth.get(n.id) ?? 0), ...compileNode(n, workflowId, o) }));
  const leaves = graph.nodes.filter((n) => !graph.edges.some((e) => e.source === n.id));
  nodes.push({ ...statusNode(graph), id: `${workflowId}-status`, position: place(Math.max(0, ...depth.values()) + 1) });

  const connections: N8nConnections = {};
  const link = (from: string, output: number, to: string) => {
    const main = (connections[from] ??= { main: [] }).main;
    while (main.length <= output) main.push([]);
    main[output]!.push({ node: to, type: "main", index: 0 });
  };
  for (const e of graph.edges) {
    const source = byId.get(e.source);
    const target = byId.get(e.target);
    if (source && target) link(nodeName(source), e.label === "false" ? 1 : 0, nodeName(target));
  }
  // Validation gives every condition both branches, so a leaf has one output: it ends its branch.
  for (const leaf of leaves) link(nodeName(leaf), 0, STATUS_NODE);
  return { name, nodes, connections, settings: { executionOrder: "v1" } };
}
