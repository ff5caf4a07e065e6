import { API_NODE_ARGS } from "../../bench/lib/servers";
import { runNode, type TsProcess } from "../support/process";

/**
 * The Node entry as `npm start` runs it (built once by the caller), in a child process that can be
 * killed with SIGKILL and started again on the same port and database.
 */
export class ServerProcess {
  #proc: TsProcess | undefined;
  #output: string[] = [];
  starts = 0;
  kills = 0;

  constructor(
    private readonly env: Record<string, string>,
    readonly url: string,
  ) {}

  /** Starts the server and waits until it answers (it applies the migrations before it listens). */
  async start(deadlineMs: number): Promise<void> {
    for (;;) {
      const proc = runNode(API_NODE_ARGS, this.env);
      this.#proc = proc;
      this.starts++;
      const exited = proc.exited.then(() => "exited" as const);
      const ready = this.#waitListening(proc, deadlineMs);
      if ((await Promise.race([ready, exited])) === "listening") return;
      if (proc.child.exitCode === null) {
        proc.child.kill("SIGKILL");
        await proc.exited;
      }
      this.#output.push(proc.output());
      // A start whose database connection was cut (a backend kill during its migration check)
      // exits; start again while time is left.
      if (Date.now() > deadlineMs) throw new Error(`the server did not start:\n${this.lastOutput()}`);
    }
  }

  /** kill -9: no cleanup, no last log lines, requests in flight cut off. */
  async kill(): Promise<void> {
    const proc = this.#proc;
    if (!proc) return;
    this.kills++;
    proc.child.kill("SIGKILL");
    await proc.exited;
    this.#output.push(proc.output());
  }

  async stop(): Promise<void> {
    const proc = this.#proc;
    if (!proc || proc.child.exitCode !== null) return;
    proc.child.kill("SIGTERM");
    const timer = setTimeout(() => proc.child.kill("SIGKILL"), 5_000);
    await proc.exited;
    clearTimeout(timer);
  }

  lastOutput(): string {
    return [...this.#output, this.#proc?.output() ?? ""].join("\n").split("\n").slice(-40).join("\n");
  }

  async #waitListening(proc: TsProcess, deadlineMs: number): Promise<"listening" | "gone"> {
    while (Date.now() < deadlineMs && proc.child.exitCode === null) {
      try {
        // Any answer (503 while the database is being cut off too) means it listens.
        await fetch(`${this.url}/health`, { signal: AbortSignal.timeout(2_000) });
        return "listening";
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    return "gone";
  }
}
