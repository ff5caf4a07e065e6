/**
 * Work a process runs beside its requests (translation jobs). The entry that owns the process
 * builds one, hands it to the app and its schedules, and waits for `drain()` before it closes
 * the database, so a job is never cut off in the middle of writing.
 */
export interface BackgroundWork {
  track(work: Promise<unknown>): void;
  /** Settles once everything tracked so far (and anything tracked meanwhile) has settled. */
  drain(): Promise<void>;
}

export function createBackgroundWork(): BackgroundWork {
  const running = new Set<Promise<unknown>>();
  return {
    track(work) {
      const settled = work.then(
        () => undefined,
        () => undefined,
      );
      running.add(settled);
      void settled.then(() => running.delete(settled));
    },
    async drain() {
      while (running.size > 0) await Promise.all([...running]);
    },
  };
}
