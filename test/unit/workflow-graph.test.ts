import { describe, expect, it } from "vitest";
import { graphIssues, MAX_NODES, type RawGraph } from "../../src/services/workflows/graph";

type Node = RawGraph["nodes"][number];
type Edge = RawGraph["edges"][number];

const trigger: Node = { id: "t", type: "trigger", data: { event: "match.created" } };
const push: Node = { id: "m", type: "send_message", data: { channel: "push", template: "Hi {{displayName}}" } };
const email: Node = { id: "e", type: "send_message", data: { channel: "email", template: "Welcome", subject: "Hello" } };
const wait: Node = { id: "d", type: "delay", data: { minutes: 60 } };
const cond: Node = { id: "c", type: "condition", data: { field: "input.plan", op: "equals", value: "premium" } };

/** trigger → condition → (true) push, (false) delay → email: every node type, valid. */
const valid = (): RawGraph => ({
  nodes: [trigger, cond, push, wait, email],
  edges: [
    { id: "e1", source: "t", target: "c" },
    { id: "e2", source: "c", target: "m", label: "true" },
    { id: "e3", source: "c", target: "d", label: "false" },
    { id: "e4", source: "d", target: "e" },
  ],
});

const withNode = (id: string, patch: Partial<Node>): RawGraph => {
  const g = valid();
  return { ...g, nodes: g.nodes.map((n) => (n.id === id ? { ...n, ...patch } : n)) };
};
const withEdges = (edges: Edge[]): RawGraph => ({ ...valid(), edges });
const chain = (n: number): RawGraph => ({
  nodes: [trigger, ...Array.from({ length: n - 1 }, (_, i): Node => ({ id: `w${i}`, type: "delay", data: { minutes: 1 } }))],
  edges: Array.from({ length: n - 1 }, (_, i): Edge => ({ id: `x${i}`, source: i === 0 ? "t" : `w${i - 1}`, target: `w${i}` })),
});

describe("workflow graph validation", () => {
  it("accepts a graph that uses every node type", () => {
    expect(graphIssues(valid())).toEqual([]);
    expect(graphIssues(withNode("t", { data: { event: "schedule", cron: "0 9 * * 1-5" } }))).toEqual([]);
    expect(graphIssues(chain(MAX_NODES))).toEqual([]);
  });

  const cases: { rule: string; graph: RawGraph; problems: { path: string; message: RegExp }[] }[] = [
    { rule: "no trigger", graph: { nodes: [push], edges: [] }, problems: [{ path: "nodes", message: /exactly one trigger.*none/ }] },
    {
      rule: "two triggers",
      graph: { nodes: [trigger, { ...trigger, id: "t2" }, push], edges: [{ id: "e1", source: "t", target: "m" }, { id: "e2", source: "t2", target: "m" }] },
      problems: [{ path: "nodes.t2", message: /another/ }],
    },
    { rule: "edge from a missing node", graph: withEdges([...valid().edges, { id: "e9", source: "ghost", target: "m" }]), problems: [{ path: "edges.e9.source", message: /no node 'ghost'/ }] },
    { rule: "edge to a missing node", graph: withEdges([...valid().edges, { id: "e9", source: "m", target: "ghost" }]), problems: [{ path: "edges.e9.target", message: /no node 'ghost'/ }] },
    { rule: "edge into the trigger", graph: withEdges([...valid().edges, { id: "e9", source: "m", target: "t" }]), problems: [{ path: "edges.e9.target", message: /into the trigger/ }, { path: "edges.e9", message: /cycle/ }] },
    { rule: "self loop", graph: withEdges([...valid().edges, { id: "e9", source: "d", target: "d" }]), problems: [{ path: "edges.e9", message: /itself/ }] },
    { rule: "cycle", graph: withEdges([...valid().edges, { id: "e9", source: "e", target: "c" }]), problems: [{ path: "edges.e9", message: /cycle/ }] },
    { rule: "unreachable node", graph: { ...valid(), nodes: [...valid().nodes, { id: "lost", type: "delay", data: { minutes: 5 } }] }, problems: [{ path: "nodes.lost", message: /not reachable/ }] },
    { rule: "unknown node type", graph: withNode("m", { type: "teleport" }), problems: [{ path: "nodes.m.type", message: /unknown node type/ }] },
    { rule: "duplicate node id", graph: { ...valid(), nodes: [...valid().nodes, push] }, problems: [{ path: "nodes.m", message: /duplicate node id/ }] },
    { rule: "malformed node id", graph: { ...valid(), nodes: [...valid().nodes, { ...wait, id: "a b" }] }, problems: [{ path: "nodes.a b", message: /id must be/ }] },
    { rule: "duplicate edge id", graph: withEdges([...valid().edges, { id: "e4", source: "t", target: "e" }]), problems: [{ path: "edges.e4", message: /duplicate edge id/ }] },
    { rule: "unknown trigger event", graph: withNode("t", { data: { event: "user.sneezed" } }), problems: [{ path: "nodes.t.data.event", message: /must be one of/ }] },
    { rule: "schedule without cron", graph: withNode("t", { data: { event: "schedule" } }), problems: [{ path: "nodes.t.data.cron", message: /cron/ }] },
    { rule: "schedule with a bad cron", graph: withNode("t", { data: { event: "schedule", cron: "every day" } }), problems: [{ path: "nodes.t.data.cron", message: /cron/ }] },
    { rule: "cron on an event trigger", graph: withNode("t", { data: { event: "manual", cron: "0 9 * * *" } }), problems: [{ path: "nodes.t.data.cron", message: /only a schedule/ }] },
    { rule: "unknown channel", graph: withNode("m", { data: { channel: "pigeon", template: "hi" } }), problems: [{ path: "nodes.m.data.channel", message: /must be one of/ }] },
    { rule: "empty template", graph: withNode("m", { data: { channel: "push", template: "  " } }), problems: [{ path: "nodes.m.data.template", message: /non-empty/ }] },
    { rule: "template too long", graph: withNode("m", { data: { channel: "push", template: "x".repeat(2001) } }), problems: [{ path: "nodes.m.data.template", message: /at most 2000/ }] },
    { rule: "unknown placeholder", graph: withNode("m", { data: { channel: "push", template: "Hi {{ password }}" } }), problems: [{ path: "nodes.m.data.template", message: /unknown placeholder \{\{password\}\}/ }] },
    { rule: "subject on a push", graph: withNode("m", { data: { channel: "push", template: "hi", subject: "S" } }), problems: [{ path: "nodes.m.data.subject", message: /only an email/ }] },
    { rule: "delay not a whole number", graph: withNode("d", { data: { minutes: 1.5 } }), problems: [{ path: "nodes.d.data.minutes", message: /whole number/ }] },
    { rule: "delay too long", graph: withNode("d", { data: { minutes: 43_201 } }), problems: [{ path: "nodes.d.data.minutes", message: /whole number/ }] },
    { rule: "condition with a bad field", graph: withNode("c", { data: { field: "1; drop", op: "equals", value: 1 } }), problems: [{ path: "nodes.c.data.field", message: /field name/ }] },
    { rule: "condition with an unknown op", graph: withNode("c", { data: { field: "input.plan", op: "like", value: "x" } }), problems: [{ path: "nodes.c.data.op", message: /must be one of/ }] },
    { rule: "condition with an object value", graph: withNode("c", { data: { field: "input.plan", op: "equals", value: { a: 1 } } }), problems: [{ path: "nodes.c.data.value", message: /string/ }] },
    { rule: "numeric op on text", graph: withNode("c", { data: { field: "input.age", op: "gt", value: "18" } }), problems: [{ path: "nodes.c.data.value", message: /compares numbers/ }] },
    {
      rule: "condition without its false branch",
      graph: { nodes: [trigger, cond, push], edges: valid().edges.filter((e) => e.id === "e1" || e.id === "e2") },
      problems: [{ path: "nodes.c", message: /'false' branch/ }],
    },
    {
      rule: "condition with two true branches",
      graph: withEdges([...valid().edges, { id: "e5", source: "c", target: "e", label: "true" }]),
      problems: [{ path: "nodes.c", message: /2 'true' branches/ }],
    },
    { rule: "unlabelled edge out of a condition", graph: withEdges(valid().edges.map((e) => (e.id === "e2" ? { id: "e2", source: "c", target: "m" } : e))), problems: [{ path: "edges.e2.label", message: /true or false/ }, { path: "nodes.c", message: /'true' branch/ }] },
    { rule: "label on a plain edge", graph: withEdges(valid().edges.map((e) => (e.id === "e4" ? { ...e, label: "true" } : e))), problems: [{ path: "edges.e4.label", message: /only edges out of a condition/ }] },
    { rule: "more than 100 nodes", graph: chain(MAX_NODES + 1), problems: [{ path: "nodes", message: /at most 100 nodes/ }] },
  ];

  it.each(cases)("names the problem: $rule", ({ graph, problems }) => {
    const issues = graphIssues(graph);
    for (const p of problems) expect(issues).toContainEqual({ path: p.path, message: expect.stringMatching(p.message) });
    expect(issues).toHaveLength(problems.length);
  });

  it("reports every problem of a graph at once", () => {
    const g = withNode("m", { data: { channel: "fax", template: "" } });
    const issues = graphIssues({ ...g, edges: [...g.edges, { id: "e9", source: "nope", target: "m" }] });
    expect(issues.map((i) => i.path).sort()).toEqual(["edges.e9.source", "nodes.m.data.channel", "nodes.m.data.template"]);
  });
});
