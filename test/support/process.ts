import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";

/**
 * A TCP port on 127.0.0.1 that nothing listened on a moment ago. Anything may take it before the
 * caller listens on it (another test's server, or the local end of a connection): a server started
 * on it goes through startListening, and a server of the test's own listens on port 0 instead.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, "127.0.0.1", () => {
      const address = srv.address();
      srv.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

export interface TsProcess {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** stdout and stderr together, in the order they arrived. */
  output: () => string;
  exited: Promise<number | null>;
}

/** Runs one of the project's TypeScript scripts in a Node process of its own, with only PATH and `env` set. */
export function runTs(script: string, args: string[], env: Record<string, string>): TsProcess {
  return runNode(["--import", "tsx", script, ...args], env);
}

/** Runs Node with these arguments in a process of its own, with only PATH and `env` set. */
export function runNode(nodeArgs: string[], env: Record<string, string>): TsProcess {
  let out = "";
  let err = "";
  let all = "";
  const child = spawn(process.execPath, nodeArgs, { env: { PATH: process.env.PATH ?? "", ...env }, stdio: ["ignore", "pipe", "pipe"] });
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
    all += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    err += d.toString();
    all += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, stdout: () => out, stderr: () => err, output: () => all, exited };
}

/**
 * Starts a server process and waits until `listening` says it is up. `start` picks its ports with
 * freePort(), which only knows they were free a moment ago: a process that exits because one was
 * taken by then (EADDRINUSE) is started again on fresh ports; any other exit fails with its output.
 */
export async function startListening<T extends { proc: TsProcess }>(start: () => Promise<T>, listening: (proc: TsProcess) => boolean, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 1; ; attempt++) {
    const started = await start();
    const { proc } = started;
    const closed = new Promise<void>((resolve) => proc.child.once("close", () => resolve()));
    for (;;) {
      if (listening(proc)) return started;
      if (proc.child.exitCode !== null || proc.child.signalCode !== null) break;
      if (Date.now() > deadline) {
        proc.child.kill("SIGKILL");
        throw new Error(`the server did not listen within ${timeoutMs} ms:\n${proc.output()}`);
      }
      // The poll interval of a wait with a deadline, on a process that says when it listens.
      await new Promise((r) => setTimeout(r, 50));
    }
    // The reason may still be in the pipe when the process has exited.
    await Promise.race([closed, new Promise((r) => setTimeout(r, 1_000))]);
    if (!proc.output().includes("EADDRINUSE") || attempt === 5) throw new Error(`the server exited with ${proc.child.exitCode ?? proc.child.signalCode} before listening:\n${proc.output()}`);
  }
}
