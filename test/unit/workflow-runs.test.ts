import { describe, expect, it } from "vitest";
import { transition } from "../../src/services/workflows/callback";
import { longestWaitMs, RUN_STATUSES, type RunStatus } from "../../src/services/workflows/runs";
import type { WorkflowGraph } from "../../src/services/workflows/graph";
import { sampleWorkflow } from "../support/workflows";

describe("the run state machine", () => {
  const table: Record<RunStatus, Record<"running" | "succeeded" | "failed", "apply" | "noop" | "conflict">> = {
    queued: { running: "apply", succeeded: "apply", failed: "apply" },
    running: { running: "noop", succeeded: "apply", failed: "apply" },
    succeeded: { running: "noop", succeeded: "noop", failed: "conflict" },
    failed: { running: "noop", succeeded: "conflict", failed: "noop" },
    timed_out: { running: "noop", succeeded: "conflict", failed: "conflict" },
  };
  it.each(RUN_STATUSES)("from %s", (from) => {
    for (const to of ["running", "succeeded", "failed"] as const) expect(transition(from, to), `${from} → ${to}`).toBe(table[from][to]);
  });
});

describe("a run's deadline", () => {
  it("counts the longest chain of waits from the trigger", () => {
    const g = sampleWorkflow() as unknown as WorkflowGraph;
    expect(longestWaitMs(g)).toBe(30 * 60_000);
    const chained: WorkflowGraph = {
      nodes: [
        { id: "t", type: "trigger", data: { event: "manual" } },
        { id: "a", type: "delay", data: { minutes: 5 } },
        { id: "b", type: "delay", data: { minutes: 7 } },
        { id: "c", type: "delay", data: { minutes: 20 } },
      ],
      edges: [
        { id: "1", source: "t", target: "a" },
        { id: "2", source: "a", target: "b" },
        { id: "3", source: "t", target: "c" },
      ],
    };
    expect(longestWaitMs(chained)).toBe(20 * 60_000);
  });
});
