import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { lockDataDir } from "../../src/node/data-dir-lock";

const dirs: string[] = [];
const freshDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "api-lock-"));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Another process, alive until `stop`, or one that has already exited. */
async function otherProcess(alive: boolean): Promise<{ pid: number; stop: () => void }> {
  const child = spawn(process.execPath, ["-e", alive ? "setTimeout(() => {}, 60000)" : ""], { stdio: "ignore" });
  if (!alive) await new Promise((resolve) => child.once("exit", resolve));
  return { pid: child.pid as number, stop: () => child.kill("SIGKILL") };
}

describe("the embedded database's folder lock", () => {
  it("holds the owner's pid while held and is gone once released", () => {
    const dir = freshDir();
    const release = lockDataDir(dir);
    expect(readFileSync(join(dir, "pglite.lock"), "utf8")).toBe(String(process.pid));
    release();
    expect(existsSync(join(dir, "pglite.lock"))).toBe(false);
    lockDataDir(dir)();
  });

  it("refuses a folder another live process holds, naming it", async () => {
    const dir = freshDir();
    const other = await otherProcess(true);
    try {
      writeFileSync(join(dir, "pglite.lock"), String(other.pid));
      expect(() => lockDataDir(dir)).toThrow(`in use by process ${other.pid}`);
      // Refusing it leaves the other process's lock in place.
      expect(readFileSync(join(dir, "pglite.lock"), "utf8")).toBe(String(other.pid));
    } finally {
      other.stop();
    }
  });

  it("takes over the lock of a process that is gone (a crash or SIGKILL)", async () => {
    const dir = freshDir();
    const gone = await otherProcess(false);
    writeFileSync(join(dir, "pglite.lock"), String(gone.pid));
    const release = lockDataDir(dir);
    expect(readFileSync(join(dir, "pglite.lock"), "utf8")).toBe(String(process.pid));
    release();
  });

  it("refuses a second open from the same process until the first is released", () => {
    const dir = freshDir();
    const release = lockDataDir(dir);
    expect(() => lockDataDir(dir)).toThrow("already open in this process");
    release();
    lockDataDir(dir)();
  });
});
