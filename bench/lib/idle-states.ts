import { closeSync, openSync, writeSync } from "node:fs";

export interface IdleStateHold {
  /** What the run measured under, for the report. */
  describe: string;
  release(): void;
}

/**
 * Keeps the CPUs out of their idle states while latency is measured, the way latency benchmarks
 * do it (cyclictest by default, tuned's latency-performance profile): a PM QoS request of 0 µs on
 * /dev/cpu_dma_latency, held while the file stays open. On a virtual machine an idle virtual CPU
 * halts and goes back to the hypervisor, and waking it again for a socket that became readable
 * costs up to milliseconds; a server whose request makes more hops through other processes pays
 * that more often, so on a quiet machine the figure measured the machine's halting more than the
 * code. `allow` measures with the machine's own idle policy instead.
 */
export function holdIdleStates(mode: "hold" | "allow"): IdleStateHold {
  if (mode === "allow") return { describe: "CPU idle states allowed (the machine's own policy)", release: () => {} };
  let fd: number;
  try {
    fd = openSync("/dev/cpu_dma_latency", "w");
    writeSync(fd, Buffer.from(new Int32Array([0]).buffer));
  } catch (err) {
    const reason = err instanceof Error && "code" in err ? String((err as NodeJS.ErrnoException).code) : String(err);
    return { describe: `CPU idle states could not be held (/dev/cpu_dma_latency: ${reason}); measured under the machine's own policy`, release: () => {} };
  }
  let held = true;
  return {
    describe: "CPU idle states held off (PM QoS cpu_dma_latency = 0 µs, as cyclictest does)",
    release: () => {
      if (held) closeSync(fd);
      held = false;
    },
  };
}
