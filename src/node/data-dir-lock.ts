import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";

/** Locks held by this process, so a second open from the same process fails too. */
const held = new Set<string>();

/**
 * The embedded database keeps its pages in each process's memory: two processes on one folder
 * each write their own copy, and whichever closes last wins, so an answered write can vanish. The
 * lock is a file created exclusively that holds the owner's pid; a lock whose process is gone (a
 * crash, SIGKILL) is taken over. Returns the release.
 */
export function lockDataDir(dir: string): () => void {
  const path = join(dir, "pglite.lock");
  if (held.has(path)) throw new Error(`the embedded database in ${dir} is already open in this process`);
  for (let attempt = 0; ; attempt++) {
    try {
      const fd = openSync(path, "wx");
      try {
        writeSync(fd, String(process.pid));
      } finally {
        closeSync(fd);
      }
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST" || attempt > 0) throw lockError(err, dir, path);
      const holder = readHolder(path);
      if (holder !== undefined && holder !== process.pid && isAlive(holder)) {
        throw new Error(`DATA_DIR ${dir} is in use by process ${holder}: one server per DATA_DIR (stop it, or remove ${path} if that process is not ours)`);
      }
      // Stale: read again just before removing it, so a lock another process has just taken is left alone.
      if (readHolder(path) === holder) unlinkQuietly(path);
    }
  }
  held.add(path);
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    held.delete(path);
    process.off("exit", release);
    if (readHolder(path) === process.pid) unlinkQuietly(path);
  };
  process.on("exit", release);
  return release;
}

function lockError(err: unknown, dir: string, path: string): Error {
  if ((err as NodeJS.ErrnoException).code === "EEXIST") {
    return new Error(`DATA_DIR ${dir} is in use by process ${readHolder(path) ?? "unknown"}: one server per DATA_DIR`);
  }
  return new Error(`cannot lock DATA_DIR ${dir}: ${err instanceof Error ? err.message : String(err)}`);
}

function readHolder(path: string): number | undefined {
  try {
    const pid = Number(readFileSync(path, "utf8").trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, under another user.
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Gone already.
  }
}
