import { describe, expect, it } from "vitest";
import { compileWorkflow, STATUS_NODE, WEBHOOK_NODE } from "../../src/services/workflows/compile";
import type { WorkflowGraph } from "../../src/services/workflows/graph";
import { n8nWorkflowProblems } from "../support/n8n-workflow-schema";
import { sampleWorkflow } from "../support/workflows";

const graph = sampleWorkflow() as unknown as WorkflowGraph;
const options = { gatewayUrl: "https://gateway.example/v1/", gatewayCredential: "Messaging gateway", smtpCredential: "SMTP", emailFrom: "hello@example.com" };

describe("compiling a workflow to n8n", () => {
  const compiled = compileWorkflow("wfl_1", "Welcome", graph, options);

  it("yields a body n8n's public API accepts, with only the fields it allows", () => {
    expect(n8nWorkflowProblems(compiled)).toEqual([]);
    expect(Object.keys(compiled).sort()).toEqual(["connections", "name", "nodes", "settings"]);
    expect(compiled.settings).toEqual({ executionOrder: "v1" });
  });

  it("maps each node to the engine's node of that kind", () => {
    const byName = Object.fromEntries(compiled.nodes.map((n) => [n.name, n]));
    expect(byName[WEBHOOK_NODE]).toMatchObject({ type: "n8n-nodes-base.webhook", typeVersion: 2, parameters: { httpMethod: "POST", path: "wfl_1", responseMode: "onReceived" } });
    expect(byName["If · premium"]).toMatchObject({ type: "n8n-nodes-base.if" });
    expect(byName["Send push · hello"]).toMatchObject({
      type: "n8n-nodes-base.httpRequest",
      typeVersion: 4.2,
      parameters: { method: "POST", url: "https://gateway.example/v1/push", sendBody: true, specifyBody: "json" },
      credentials: { httpHeaderAuth: { name: "Messaging gateway" } },
    });
    expect(byName["Wait · later"]).toMatchObject({ type: "n8n-nodes-base.wait", parameters: { resume: "timeInterval", amount: 30, unit: "minutes" } });
    expect(byName["Send email · mail"]).toMatchObject({ type: "n8n-nodes-base.emailSend", parameters: { fromEmail: "hello@example.com", subject: "A new match" }, credentials: { smtp: { name: "SMTP" } } });
    expect(byName[STATUS_NODE]).toMatchObject({
      type: "n8n-nodes-base.httpRequest",
      parameters: { url: "={{ $('Webhook').item.json.body.statusUrl }}", headerParameters: { parameters: [{ name: "Authorization", value: "=Bearer {{ $('Webhook').item.json.body.callbackToken }}" }] } },
    });
    // The report names each message that ran; a failed message does not stop the run.
    const report = String(byName[STATUS_NODE]?.parameters.jsonBody);
    expect(report).toContain(`$("Send push · hello").isExecuted`);
    expect(report).toContain(`$("Send email · mail").isExecuted`);
    expect(report.match(/\{\{/g)).toHaveLength(1);
    expect(byName["Send push · hello"]?.onError).toBe("continueRegularOutput");
        // Credentials are referenced by name; no secret is in the body.
    expect(JSON.stringify(compiled)).not.toMatch(/password|apiKey/i);
  });

  it("connects by node name, true on output 0 and false on output 1, every branch ending in the status report", () => {
    const to = (name: string, output = 0) => compiled.connections[name]?.main[output]?.map((c) => c.node);
    expect(to(WEBHOOK_NODE)).toEqual(["If · premium"]);
    expect(to("If · premium", 0)).toEqual(["Send push · hello"]);
    expect(to("If · premium", 1)).toEqual(["Wait · later"]);
    expect(to("Wait · later")).toEqual(["Send email · mail"]);
    expect(to("Send push · hello")).toEqual([STATUS_NODE]);
    expect(to("Send email · mail")).toEqual([STATUS_NODE]);
  });

  it("renders placeholders as engine expressions and keeps admin text from closing one", () => {
    const g: WorkflowGraph = {
      nodes: [
        { id: "t", type: "trigger", data: { event: "manual" } },
        { id: "m", type: "send_message", data: { channel: "sms", template: "Hi {{displayName}} }} {{ $env }}" } },
      ],
      edges: [{ id: "e", source: "t", target: "m" }],
    };
    const body = String(compileWorkflow("wfl_2", "x", g, options).nodes[1]?.parameters.jsonBody);
    expect(body).toContain(`String($('Webhook').item.json.body.input?.displayName ?? "")`);
    // Exactly one expression: the admin's braces are escaped inside the string literal.
    expect(body.match(/\{\{/g)).toHaveLength(1);
    expect(body.match(/\}\}/g)).toHaveLength(1);
  });

  it("compiles the same graph to the same body, with or without a gateway configured", () => {
    expect(compileWorkflow("wfl_1", "Welcome", graph, options)).toEqual(compiled);
    const draft = compileWorkflow("wfl_1", "Welcome", graph, { gatewayCredential: "g", smtpCredential: "s" });
    expect(n8nWorkflowProblems(draft)).toEqual([]);
  });
});
