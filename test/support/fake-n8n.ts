import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { n8nWorkflowProblems } from "./n8n-workflow-schema";
import { execute, type MessageOutcome, type StatusCall } from "./fake-n8n-execution";

/**
 * A loopback n8n speaking its public REST API (workflows create/replace/activate, X-N8N-API-KEY
 * checked) and its production webhooks (`POST /webhook/<path>` of an active workflow, answered at
 * once as `responseMode: onReceived` does, then executed: see fake-n8n-execution.ts).
 */
export async function startFakeN8n(apiKey: string) {
  const workflows = new Map<string, { body: unknown; active: boolean }>();
  const calls: string[] = [];
  let next = 1;
  let failWith: { status: number; message: string } | undefined;
  /** Webhook bodies received, in order. */
  const received: Record<string, unknown>[] = [];
  /** Status reports the executions posted, with our answer's status. */
  const statusCalls: StatusCall[] = [];
  const executions: Promise<void>[] = [];
  let outcome: (nodeName: string) => MessageOutcome = () => ({ route: "fake-gateway", status: "delivered", latencyMs: 42 });
  let webhookFailures: number[] = [];
  const server = createServer((req, res) => {
    let raw = "";
    req.on("data", (c: Buffer) => (raw += c.toString()));
    req.on("end", () => {
      const send = (status: number, body: unknown) => (res.writeHead(status, { "content-type": "application/json" }), res.end(JSON.stringify(body)));
      calls.push(`${req.method} ${req.url}`);
      const hook = /^\/webhook\/([^/?]+)$/.exec(req.url ?? "");
      if (hook) {
        const failure = webhookFailures.shift();
        if (failure !== undefined) return send(failure, { message: "Error in workflow" });
        const wf = [...workflows.values()].find((w) => w.active && (w.body as { nodes: { type: string; parameters: { path?: string } }[] }).nodes.some((n) => n.type === "n8n-nodes-base.webhook" && n.parameters.path === hook[1]));
        if (req.method !== "POST" || !wf) return send(404, { code: 404, message: `The requested webhook "${req.method} ${hook[1]}" is not registered.` });
        let payload: Record<string, unknown>;
        try {
          payload = JSON.parse(raw) as Record<string, unknown>;
        } catch {
          return send(422, { message: "body is not JSON" });
        }
        received.push(payload);
        send(200, { message: "Workflow was started" });
        executions.push(execute(wf.body as Parameters<typeof execute>[0], payload, (name) => outcome(name), statusCalls));
        return;
      }
      if (req.headers["x-n8n-api-key"] !== apiKey) return send(401, { message: "unauthorized" });
      if (failWith) return send(failWith.status, { message: failWith.message });
      const m = /^\/api\/v1\/workflows(?:\/([^/]+))?(\/activate)?$/.exec(req.url ?? "");
      if (!m) return send(404, { message: "not found" });
      const [, id, activate] = m;
      if (activate && id) {
        const wf = workflows.get(id);
        if (!wf) return send(404, { message: "Not Found" });
        wf.active = true;
        return send(200, { id, active: true });
      }
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        return send(400, { message: "request/body must be object" });
      }
      const problems = n8nWorkflowProblems(body);
      if (problems.length) return send(400, { message: problems.join(", ") });
      if (req.method === "POST" && !id) {
        const newId = `n8n${next++}`;
        workflows.set(newId, { body, active: false });
        return send(200, { id: newId, active: false, ...(body as object) });
      }
      if (req.method === "PUT" && id) {
        if (!workflows.has(id)) return send(404, { message: "Not Found" });
        workflows.set(id, { body, active: workflows.get(id)?.active ?? false });
        return send(200, { id, ...(body as object) });
      }
      return send(405, { message: "method not allowed" });
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    workflows,
    calls,
    failNext: (f?: { status: number; message: string }) => void (failWith = f),
    received,
    statusCalls,
    /** Settles once every execution started so far has ended (its status report answered). */
    settled: () => Promise.all(executions),
    /** How each message node's gateway (or SMTP server) answers. */
    answerMessages: (f: (nodeName: string) => MessageOutcome) => void (outcome = f),
    /** The next webhook calls answer these statuses instead of starting a run. */
    failWebhooks: (statuses: number[]) => void (webhookFailures = [...statuses]),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
