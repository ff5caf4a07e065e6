/**
 * Waits for a state instead of sleeping: polls `probe` until it returns something truthy (which it
 * returns), and fails naming `what` once `timeout` ms have passed. The poll interval is short; the
 * deadline is generous, because a loaded machine is slow, not wrong.
 */
export async function waitFor<T>(what: string, probe: () => T | Promise<T>, options: { timeout?: number; interval?: number } = {}): Promise<NonNullable<T>> {
  const { timeout = 5_000, interval = 10 } = options;
  const deadline = Date.now() + timeout;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value as NonNullable<T>;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`waited ${timeout} ms for ${what}`, lastError === undefined ? undefined : { cause: lastError });
    }
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
}

/** Waits until the app has written a log line matching `match` (every key equal); returns it. */
export function waitForLog(logs: Record<string, unknown>[], match: Record<string, unknown>, timeout?: number): Promise<Record<string, unknown>> {
  const matches = (line: Record<string, unknown>) => Object.entries(match).every(([k, v]) => line[k] === v);
  return waitFor(`a log line ${JSON.stringify(match)}`, () => logs.find(matches), { timeout });
}
