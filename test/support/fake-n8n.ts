import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { n8nWorkflowProblems } from "./n8n-workflow-schema";

/** A loopback n8n speaking its public REST API: workflows create/replace/activate, X-N8N-API-KEY checked. */
export async function startFakeN8n(apiKey: string) {
  const workflows = new Map<string, { body: unknown; active: boolean }>();
  const calls: string[] = [];
  let next = 1;
  let failWith: { status: number; message: string } | undefined;
  const server = createServer((req, res) => {
    let raw = "";
    req.on("data", (c: Buffer) => (raw += c.toString()));
    req.on("end", () => {
      const send = (status: number, body: unknown) => (res.writeHead(status, { "content-type": "application/json" }), res.end(JSON.stringify(body)));
      calls.push(`${req.method} ${req.url}`);
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
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
