import { expect } from "vitest";
import type { TestApp } from "./app";
import { json, type TestUser } from "./users";

/** trigger → condition → (true) push, (false) wait → email: every node type. */
export function sampleWorkflow(name = "welcome") {
  return {
    name,
    description: "Greets a new match",
    nodes: [
      { id: "start", type: "trigger", data: { event: "match.created" } },
      { id: "premium", type: "condition", data: { field: "input.plan", op: "equals", value: "premium" } },
      { id: "hello", type: "send_message", data: { channel: "push", template: "You have a match, {{displayName}}!" } },
      { id: "later", type: "delay", data: { minutes: 30 } },
      { id: "mail", type: "send_message", data: { channel: "email", subject: "A new match", template: "Say hi, {{displayName}}" } },
    ],
    edges: [
      { id: "e1", source: "start", target: "premium" },
      { id: "e2", source: "premium", target: "hello", label: "true" },
      { id: "e3", source: "premium", target: "later", label: "false" },
      { id: "e4", source: "later", target: "mail" },
    ],
  };
}

export async function saveWorkflow(t: TestApp, admin: TestUser, body: unknown = sampleWorkflow()): Promise<Record<string, unknown> & { workflowId: string }> {
  const res = await t.request("/api/v1/messaging/workflows", json(body, admin.headers));
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as Record<string, unknown> & { workflowId: string };
}
