import type { FieldIssue } from "../../errors";

/** The graph an admin draws: a trigger, then messages, delays and conditions. */
export const TRIGGER_EVENTS = ["manual", "match.created", "wink.received", "wink.accepted", "subscription.started", "schedule"] as const;
export const CHANNELS = ["push", "email", "sms", "in_app"] as const;
export const CONDITION_OPS = ["equals", "not_equals", "contains", "gt", "lt"] as const;
/** The placeholders a message template may use; anything else between `{{ }}` is refused. */
export const PLACEHOLDERS = ["displayName", "firstName", "matchDisplayName", "planId", "coins"] as const;
export const NODE_TYPES = ["trigger", "send_message", "delay", "condition"] as const;

export const MAX_NODES = 100;
export const MAX_EDGES = 200;
export const MAX_TEMPLATE_CHARS = 2000;
/** Thirty days: a longer pause belongs in a second workflow. */
export const MAX_DELAY_MINUTES = 43_200;

export type TriggerEvent = (typeof TRIGGER_EVENTS)[number];
export type Channel = (typeof CHANNELS)[number];
export type ConditionOp = (typeof CONDITION_OPS)[number];

export type WorkflowNode =
  | { id: string; type: "trigger"; data: { event: TriggerEvent; cron?: string } }
  | { id: string; type: "send_message"; data: { channel: Channel; template: string; subject?: string } }
  | { id: string; type: "delay"; data: { minutes: number } }
  | { id: string; type: "condition"; data: { field: string; op: ConditionOp; value: string | number | boolean } };

export interface WorkflowEdge {
  id: string;
  source: string;
  target: string;
  label?: "true" | "false";
}

export interface WorkflowGraph {
  nodes: WorkflowNode[];
  edges: WorkflowEdge[];
}

/** What the client sends; checked here rather than by the body schema so each problem names its node or edge. */
export interface RawGraph {
  nodes: { id: string; type: string; data: Record<string, unknown> }[];
  edges: { id: string; source: string; target: string; label?: string }[];
}

const ID = /^[A-Za-z0-9_-]{1,64}$/;
const FIELD = /^[A-Za-z][A-Za-z0-9_.]{0,63}$/;
// Five fields, each of digits, `*`, ranges, steps and lists: what n8n's Schedule and cron parsers take.
const CRON_FIELD = /^(\*|\d{1,2}(-\d{1,2})?)(\/\d{1,2})?(,(\*|\d{1,2}(-\d{1,2})?)(\/\d{1,2})?)*$/;
const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;

const nodePath = (id: string, field?: string) => `nodes.${id}${field ? `.data.${field}` : ""}`;
const edgePath = (id: string, field?: string) => `edges.${id}${field ? `.${field}` : ""}`;

function isCron(value: unknown): value is string {
  if (typeof value !== "string") return false;
  const fields = value.trim().split(/\s+/);
  return fields.length === 5 && fields.every((f) => CRON_FIELD.test(f));
}

function checkData(node: RawGraph["nodes"][number], issues: FieldIssue[]): void {
  const d = node.data;
  const bad = (field: string, message: string) => issues.push({ path: nodePath(node.id, field), message });
  switch (node.type) {
    case "trigger":
      if (!TRIGGER_EVENTS.includes(d.event as TriggerEvent)) bad("event", `must be one of ${TRIGGER_EVENTS.join(", ")}`);
      else if (d.event === "schedule" && !isCron(d.cron)) bad("cron", "a schedule trigger needs a five-field cron expression");
      else if (d.event !== "schedule" && d.cron !== undefined) bad("cron", "only a schedule trigger takes a cron expression");
      return;
    case "send_message": {
      if (!CHANNELS.includes(d.channel as Channel)) bad("channel", `must be one of ${CHANNELS.join(", ")}`);
      if (typeof d.template !== "string" || d.template.trim() === "") bad("template", "must be non-empty text");
      else if (d.template.length > MAX_TEMPLATE_CHARS) bad("template", `at most ${MAX_TEMPLATE_CHARS} characters`);
      else {
        for (const [, name] of d.template.matchAll(PLACEHOLDER)) {
          if (!PLACEHOLDERS.includes(name as (typeof PLACEHOLDERS)[number])) bad("template", `unknown placeholder {{${name}}}; known: ${PLACEHOLDERS.join(", ")}`);
        }
      }
      if (d.subject !== undefined && (typeof d.subject !== "string" || d.subject.length > 200)) bad("subject", "must be text of at most 200 characters");
      if (d.subject !== undefined && d.channel !== "email") bad("subject", "only an email has a subject");
      return;
    }
    case "delay":
      if (!Number.isInteger(d.minutes) || (d.minutes as number) < 1 || (d.minutes as number) > MAX_DELAY_MINUTES) bad("minutes", `must be a whole number from 1 to ${MAX_DELAY_MINUTES}`);
      return;
    case "condition":
      if (typeof d.field !== "string" || !FIELD.test(d.field)) bad("field", "must be a field name such as input.plan or profile.age");
      if (!CONDITION_OPS.includes(d.op as ConditionOp)) bad("op", `must be one of ${CONDITION_OPS.join(", ")}`);
      if (!["string", "number", "boolean"].includes(typeof d.value) || (typeof d.value === "string" && d.value.length > 200)) bad("value", "must be a string (≤ 200 characters), number or boolean");
      else if ((d.op === "gt" || d.op === "lt") && typeof d.value !== "number") bad("value", `${String(d.op)} compares numbers`);
      return;
    default:
      issues.push({ path: `nodes.${node.id}.type`, message: `unknown node type; known: ${NODE_TYPES.join(", ")}` });
  }
}

/**
 * Every problem of the graph, each named by the node or edge it is about: a client fixes them all
 * at once instead of one per request. Empty means the graph is valid.
 */
export function graphIssues(graph: RawGraph): FieldIssue[] {
  const issues: FieldIssue[] = [];
  if (graph.nodes.length > MAX_NODES) issues.push({ path: "nodes", message: `at most ${MAX_NODES} nodes` });
  if (graph.edges.length > MAX_EDGES) issues.push({ path: "edges", message: `at most ${MAX_EDGES} edges` });
  if (issues.length) return issues;

  const nodes = new Map<string, RawGraph["nodes"][number]>();
  for (const node of graph.nodes) {
    if (!ID.test(node.id)) issues.push({ path: `nodes.${node.id}`, message: "id must be 1–64 letters, digits, '_' or '-'" });
    else if (nodes.has(node.id)) issues.push({ path: `nodes.${node.id}`, message: "duplicate node id" });
    else {
      nodes.set(node.id, node);
      checkData(node, issues);
    }
  }
  const triggers = graph.nodes.filter((n) => n.type === "trigger");
  if (triggers.length === 0) issues.push({ path: "nodes", message: "exactly one trigger node is required; there is none" });
  for (const extra of triggers.slice(1)) issues.push({ path: `nodes.${extra.id}`, message: "exactly one trigger node is allowed; this is another" });

  const edgeIds = new Set<string>();
  const outgoing = new Map<string, WorkflowEdge[]>();
  for (const edge of graph.edges) {
    if (!ID.test(edge.id)) issues.push({ path: edgePath(edge.id), message: "id must be 1–64 letters, digits, '_' or '-'" });
    else if (edgeIds.has(edge.id)) issues.push({ path: edgePath(edge.id), message: "duplicate edge id" });
    edgeIds.add(edge.id);
    const source = nodes.get(edge.source);
    if (!source) issues.push({ path: edgePath(edge.id, "source"), message: `no node '${edge.source}'` });
    if (!nodes.has(edge.target)) issues.push({ path: edgePath(edge.id, "target"), message: `no node '${edge.target}'` });
    if (edge.source === edge.target) issues.push({ path: edgePath(edge.id), message: "an edge cannot join a node to itself" });
    if (nodes.get(edge.target)?.type === "trigger") issues.push({ path: edgePath(edge.id, "target"), message: "nothing leads into the trigger" });
    if (source?.type === "condition") {
      if (edge.label !== "true" && edge.label !== "false") issues.push({ path: edgePath(edge.id, "label"), message: "an edge out of a condition is labelled true or false" });
    } else if (edge.label !== undefined) issues.push({ path: edgePath(edge.id, "label"), message: "only edges out of a condition carry a label" });
    // Any edge joining two distinct existing nodes counts for the walks below, even with another
    // problem: a bad label must not also make the nodes after it look unreachable.
    if (source && nodes.has(edge.target) && edge.source !== edge.target) outgoing.set(edge.source, [...(outgoing.get(edge.source) ?? []), edge as WorkflowEdge]);
  }

  for (const node of nodes.values()) {
    const out = outgoing.get(node.id) ?? [];
    if (node.type === "condition") {
      for (const label of ["true", "false"] as const) {
        const n = out.filter((e) => e.label === label).length;
        if (n === 0) issues.push({ path: `nodes.${node.id}`, message: `condition needs a '${label}' branch` });
        if (n > 1) issues.push({ path: `nodes.${node.id}`, message: `condition has ${n} '${label}' branches; one is allowed` });
      }
    }
  }

  const cycle = findCycle([...nodes.keys()], outgoing);
  if (cycle) issues.push({ path: edgePath(cycle), message: "this edge closes a cycle; a workflow runs forward only" });

  const trigger = triggers.length === 1 ? triggers[0] : undefined;
  if (trigger && nodes.has(trigger.id)) {
    const reached = new Set([trigger.id]);
    const queue = [trigger.id];
    for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
      for (const e of outgoing.get(id) ?? []) if (!reached.has(e.target)) (reached.add(e.target), queue.push(e.target));
    }
    for (const id of nodes.keys()) if (!reached.has(id)) issues.push({ path: `nodes.${id}`, message: "not reachable from the trigger" });
  }
  return issues;
}

/** The id of an edge that closes a cycle, if any (depth-first, iterative so 100 nodes never nest deep). */
function findCycle(ids: string[], outgoing: Map<string, WorkflowEdge[]>): string | undefined {
  const state = new Map<string, 1 | 2>();
  for (const start of ids) {
    if (state.has(start)) continue;
    const stack: { id: string; next: number }[] = [{ id: start, next: 0 }];
    state.set(start, 1);
    while (stack.length) {
      const top = stack[stack.length - 1]!;
      const edge = (outgoing.get(top.id) ?? [])[top.next++];
      if (!edge) {
        state.set(top.id, 2);
        stack.pop();
      } else if (state.get(edge.target) === 1) return edge.id;
      else if (!state.has(edge.target)) {
        state.set(edge.target, 1);
        stack.push({ id: edge.target, next: 0 });
      }
    }
  }
  return undefined;
}
