import type { LogSink } from "../platform/logger";

const FLUSH_AFTER_MS = 50;
const FLUSH_AT_BYTES = 64 * 1024;

/**
 * Collects log lines and writes them to stdout in batches: at most every 50 ms, or sooner
 * once 64 KiB are waiting. A write per request costs a system call each, which under load is a
 * large share of a small request. Lines still buffered are written on exit; a process killed
 * with SIGKILL loses at most the last 50 ms of lines.
 */
export function createBufferedStdoutSink(): LogSink & { flush(): void } {
  let lines: string[] = [];
  let bytes = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (lines.length === 0) return;
    const chunk = `${lines.join("\n")}\n`;
    lines = [];
    bytes = 0;
    process.stdout.write(chunk);
  };
  process.on("exit", flush);
  const sink = (line: string) => {
    lines.push(line);
    bytes += line.length + 1;
    if (bytes >= FLUSH_AT_BYTES) flush();
    else if (!timer) {
      timer = setTimeout(flush, FLUSH_AFTER_MS);
      timer.unref();
    }
  };
  return Object.assign(sink, { flush });
}
