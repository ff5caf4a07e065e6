import type { LogSink } from "../platform/logger";

const FLUSH_AFTER_MS = 50;
const CHUNK_BYTES = 64 * 1024;

export interface BufferedSink extends LogSink {
  /** Writes whatever is waiting now. */
  flush(): void;
}

/**
 * Collects log lines and writes them to stdout in batches: at most every 50 ms, or sooner
 * once 64 KiB are waiting. A write per request costs a system call each, which under load is a
 * large share of a small request. Lines are encoded into the chunk as they come, so no line
 * outlives its request in the heap (strings held for 50 ms survive young-generation collections
 * and make every later collection dearer). Lines still waiting are written on exit; a process
 * killed with SIGKILL loses at most the last 50 ms of lines.
 */
export function createBufferedSink(write: (chunk: Uint8Array) => void = (chunk) => process.stdout.write(chunk)): BufferedSink {
  let chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  let used = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (used === 0) return;
    // A fresh chunk each time: an asynchronous stdout may still be reading the last one.
    const full = chunk.subarray(0, used);
    chunk = Buffer.allocUnsafe(CHUNK_BYTES);
    used = 0;
    write(full);
  };
  process.on("exit", flush);
  const sink = (line: string) => {
    // Worst case three bytes per UTF-16 unit, plus the newline.
    if (used + line.length * 3 + 1 > CHUNK_BYTES) {
      flush();
      if (line.length * 3 + 1 > CHUNK_BYTES) return write(Buffer.from(`${line}\n`));
    }
    used += chunk.write(line, used);
    chunk[used++] = 0x0a;
    if (!timer) {
      timer = setTimeout(flush, FLUSH_AFTER_MS);
      timer.unref();
    }
  };
  return Object.assign(sink, { flush });
}
