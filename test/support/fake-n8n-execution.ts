/**
 * Runs a stored workflow body the way n8n would for a production webhook call, far enough for our
 * compiled workflows: the Webhook node's output is `{body}`, IF nodes compare with their operator,
 * Wait nodes pass through (no real wait), message nodes answer as the gateway or SMTP server would,
 * and the HTTP Request node that reports the status evaluates its `={{ … }}` parameters and posts.
 */
type Node = { name: string; type: string; parameters: Record<string, unknown>; onError?: string };
type Workflow = { nodes: Node[]; connections: Record<string, { main: { node: string }[][] }> };
type Output = { json: Record<string, unknown> };

export type MessageOutcome = { route?: string; status?: string; latencyMs?: number } | { error: string };

export interface StatusCall {
  url: string;
  authorization: string;
  body: Record<string, unknown>;
  status: number;
}

/** Evaluates an n8n parameter: a string starting with `=` holds `{{ expression }}` parts. */
function evaluate(value: unknown, outputs: Map<string, Output>): unknown {
  if (typeof value !== "string" || !value.startsWith("=")) return value;
  const $ = (name: string) => ({ isExecuted: outputs.has(name), item: { json: outputs.get(name)?.json ?? {} } });
  const $now = { toISO: () => new Date().toISOString() };
  const run = (expr: string) => new Function("$", "$now", `return (${expr});`)($, $now) as unknown;
  const text = value.slice(1);
  const whole = /^\{\{([\s\S]*)\}\}$/.exec(text);
  if (whole && !whole[1]!.includes("{{")) return run(whole[1]!);
  return text.replace(/\{\{([\s\S]*?)\}\}/g, (_, expr: string) => String(run(expr)));
}

function compare(op: string, left: unknown, right: unknown): boolean {
  switch (op) {
    case "equals": return left === right;
    case "notEquals": return left !== right;
    case "contains": return String(left ?? "").includes(String(right));
    case "gt": return Number(left) > Number(right);
    case "lt": return Number(left) < Number(right);
    default: throw new Error(`unknown operation ${op}`);
  }
}

export async function execute(wf: Workflow, body: unknown, outcome: (nodeName: string) => MessageOutcome, calls: StatusCall[]): Promise<void> {
  const byName = new Map(wf.nodes.map((n) => [n.name, n]));
  const outputs = new Map<string, Output>();
  const queue: string[] = [];
  outputs.set("Webhook", { json: { body } });
  const next = (name: string, output = 0) => queue.push(...(wf.connections[name]?.main[output] ?? []).map((c) => c.node));
  next("Webhook");
  for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
    const node = byName.get(name);
    if (!node) throw new Error(`no node ${name}`);
    const p = node.parameters;
    if (node.type === "n8n-nodes-base.if") {
      const c = (p.conditions as { conditions: { leftValue: string; rightValue: unknown; operator: { operation: string } }[] }).conditions[0]!;
      outputs.set(name, { json: {} });
      next(name, compare(c.operator.operation, evaluate(c.leftValue, outputs), c.rightValue) ? 0 : 1);
    } else if (node.type === "n8n-nodes-base.wait") {
      outputs.set(name, { json: {} });
      next(name);
    } else if (node.type === "n8n-nodes-base.emailSend" || (node.type === "n8n-nodes-base.httpRequest" && name.startsWith("Send "))) {
      // The message's own text must evaluate, as the engine would render it.
      evaluate(node.type === "n8n-nodes-base.emailSend" ? p.text : p.jsonBody, outputs);
      const result = outcome(name);
      if ("error" in result && node.onError !== "continueRegularOutput") return;
      outputs.set(name, { json: result as Record<string, unknown> });
      next(name);
    } else if (node.type === "n8n-nodes-base.httpRequest") {
      const url = String(evaluate(p.url, outputs));
      const headers = (p.headerParameters as { parameters: { name: string; value: string }[] }).parameters;
      const authorization = String(evaluate(headers.find((h) => h.name === "Authorization")?.value, outputs));
      const json = String(evaluate(p.jsonBody, outputs));
      const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", authorization }, body: json });
      await res.text();
      calls.push({ url, authorization, body: JSON.parse(json) as Record<string, unknown>, status: res.status });
      outputs.set(name, { json: {} });
    } else {
      throw new Error(`the fake engine does not run ${node.type}`);
    }
  }
}
