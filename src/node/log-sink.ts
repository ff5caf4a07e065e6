import type { LogSink } from "../platform/logger";

const FLUSH_AFTER_MS = 50;
const CHUNK_BYTES = 64 * 1024;

/** Writes of at most this many bytes to a pipe are never interleaved with another process's (POSIX PIPE_BUF on Linux). */
export const PIPE_ATOMIC_BYTES = 4096;

/**
 * Wraps `write` so that each call gets whole lines of at most `maxBytes` (a longer line goes
 * alone). Worker processes share one stdout: a batch written whole could be cut into by another
 * worker's batch mid-line, while pieces of PIPE_ATOMIC_BYTES arrive intact.
 */
export function inWholeLines(write: (chunk: Uint8Array) => void, maxBytes = PIPE_ATOMIC_BYTES): (chunk: Uint8Array) => void {
  return (chunk) => {
    let start = 0;
    while (chunk.length - start > maxBytes) {
      const newline = chunk.lastIndexOf(0x0a, start + maxBytes - 1);
      const end = newline >= start ? newline + 1 : chunk.indexOf(0x0a, start + maxBytes) + 1 || chunk.length;
      write(chunk.subarray(start, end));
      start = end;
    }
    if (start < chunk.length) write(chunk.subarray(start));
  };
}

const toStdout = (chunk: Uint8Array) => void process.stdout.write(chunk);

/** The sink of a process that shares its stdout with others (a cluster's primary and workers). */
export function createSharedStdoutSink(): BufferedSink {
  return createBufferedSink(inWholeLines(toStdout));
}

export interface BufferedSink extends LogSink {
  /** Writes whatever is waiting now. */
  flush(): void;
}

/**
 * Collects log lines and writes them to stdout in batches: at most every 50 ms, or sooner
 * once 64 KiB are waiting. A write per request costs a system call each, which under load is a
 * large share of a small request. The lines of one event-loop turn are encoded into the chunk
 * together when the turn ends: one encoding call per turn instead of one per line, and no line
 * outlives the turn that made it (strings held for 50 ms would survive young-generation
 * collections and make every later collection dearer). Lines still waiting are written on exit;
 * a process killed with SIGKILL loses at most the last 50 ms of lines.
 */
export function createBufferedSink(write: (chunk: Uint8Array) => void = toStdout): BufferedSink {
  let chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  let used = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let lines: string[] = [];
  let waitingUnits = 0;
  let encodeScheduled = false;

  const writeChunk = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (used === 0) return;
    // A fresh chunk each time: an asynchronous stdout may still be reading the last one.
    const full = chunk.subarray(0, used);
    chunk = Buffer.allocUnsafe(CHUNK_BYTES);
    used = 0;
    write(full);
  };
  const encodeLines = () => {
    encodeScheduled = false;
    if (lines.length === 0) return;
    const text = `${lines.join("\n")}\n`;
    lines = [];
    waitingUnits = 0;
    // Worst case three bytes per UTF-16 unit.
    if (used + text.length * 3 > CHUNK_BYTES) {
      writeChunk();
      if (text.length * 3 > CHUNK_BYTES) return write(Buffer.from(text));
    }
    used += chunk.write(text, used);
    if (!timer) {
      timer = setTimeout(writeChunk, FLUSH_AFTER_MS);
      timer.unref();
    }
  };
  const flush = () => {
    encodeLines();
    writeChunk();
  };
  process.on("exit", flush);
  const sink = (line: string) => {
    lines.push(line);
    // A turn that logs a lot does not hold more than a chunk's worth of lines.
    waitingUnits += line.length + 1;
    if (waitingUnits * 3 > CHUNK_BYTES) return encodeLines();
    if (!encodeScheduled) {
      encodeScheduled = true;
      setImmediate(encodeLines);
    }
  };
  return Object.assign(sink, { flush });
}
