import { startFakeInference } from "../../test/support/fake-inference";

/**
 * The fake inference host in a process of its own, so the load generator's work does not delay
 * its answers: `tsx bench/lib/fake-inference-host.ts <delayMs>` prints its URL, then answers every
 * chat call after exactly that delay with a valid answer for the schema it was sent.
 */
const delayMs = Number(process.argv[2] ?? 200);
const host = await startFakeInference({ model: "bench-model:7b", mode: "slow", delayMs, keep: 0 });
console.log(host.url);
process.on("SIGTERM", () => void host.close().then(() => process.exit(0)));
