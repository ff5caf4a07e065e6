import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";

/** A TCP port on 127.0.0.1 that nothing listened on a moment ago. */
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
