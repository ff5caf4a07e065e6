import type { LogSink } from "../platform/logger";

/**
 * Collects log lines and writes them to stdout once per turn of the event loop: one write per
 * request costs a system call each, which under load is a large share of a small request.
 * Lines still buffered are written on exit.
 */
export function createBufferedStdoutSink(maxBuffered = 1_000): LogSink & { flush(): void } {
  let lines: string[] = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (lines.length === 0) return;
    const chunk = `${lines.join("\n")}\n`;
    lines = [];
    process.stdout.write(chunk);
  };
  process.on("exit", flush);
  const sink = (line: string) => {
    lines.push(line);
    if (lines.length >= maxBuffered) flush();
    else if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };
  return Object.assign(sink, { flush });
}
