import { availableParallelism } from "node:os";
import { benchAi } from "./ai";
import { benchAiBudget } from "./ai-budget";
import { benchAuth } from "./auth";
import { benchDiscover } from "./discover";
import { benchFinance } from "./finance";
import { benchHttp } from "./http";
import { benchSse } from "./sse";
import { benchSupport } from "./support";
import { benchTransfers } from "./transfers";
import { benchVersions, type Workload } from "./versions";
import { benchWallet } from "./wallet";
import { benchWebhooks } from "./webhooks";
import { benchOutbox } from "./outbox";
import { dropBenchDatabases } from "./lib/servers";

/** `npm run bench -- <name> [--seconds N] [--rounds N] [--connections N] [--streams N] [--warmup N] [--keep]` */
const [name = "http", ...rest] = process.argv.slice(2);
/** A numeric flag; above 0 unless `zero` allows 0 too (a duration that may be left out). */
const flag = (key: string, fallback: number, { zero = false } = {}) => {
  const i = rest.indexOf(`--${key}`);
  const value = i >= 0 ? Number(rest[i + 1]) : fallback;
  return Number.isFinite(value) && (value > 0 || (zero && value === 0)) ? value : fallback;
};

const text = (key: string) => {
  const i = rest.indexOf(`--${key}`);
  return i >= 0 ? rest[i + 1] : undefined;
};

const benches: Record<string, () => Promise<void>> = {
  ai: () => benchAi({ seconds: flag("seconds", 10), warmupMs: flag("warmup", 1, { zero: true }) * 1000, rounds: flag("rounds", 2), connections: flag("connections", 100), users: flag("users", 2000), delayMs: flag("delay", 200), api: text("api") === "openai" ? "openai" : "ollama", idleStates: text("idle-states") === "allow" ? "allow" : "hold", profileDir: text("profile"), workers: flag("workers", availableParallelism()) }),
  "ai-budget": () =>
    benchAiBudget({
      seconds: flag("seconds", 10),
      warmupMs: flag("warmup", 1, { zero: true }) * 1000,
      rounds: flag("rounds", 2),
      connections: flag("connections", 100),
      delayMs: flag("delay", 200),
      busyUs: (text("busy") ?? "0,60,125,250").split(",").map(Number).filter((n) => Number.isFinite(n) && n >= 0),
      idleStates: text("idle-states") === "allow" ? "allow" : "hold",
    }),
  auth: () => benchAuth({ seconds: flag("seconds", 8), rounds: flag("rounds", 3), connections: flag("connections", 50), users: flag("users", 2000) }),
  http: () => benchHttp({ seconds: flag("seconds", 8), rounds: flag("rounds", 3), connections: flag("connections", 50) }),
  discover: () =>
    benchDiscover({
      seconds: flag("seconds", 10),
      connections: flag("connections", 16),
      users: flag("users", 200),
      profiles: flag("profiles", 100_000),
      pages: flag("pages", 5),
      limit: flag("limit", 20),
      baseline: text("baseline"),
      rounds: flag("rounds", 1),
    }),
  finance: () => benchFinance({ seconds: flag("seconds", 10), rounds: flag("rounds", 2), connections: flag("connections", 1), postings: flag("postings", 1_000_000), payments: flag("payments", 100_000) }),
  sse: () => benchSse({ streams: flag("streams", 10_000), batch: flag("batch", 500), timeoutSeconds: flag("timeout", 30) }),
  support: () => benchSupport({ seconds: flag("seconds", 8), connections: flag("connections", 16), users: flag("users", 2000), megabytes: flag("megabytes", 2) }),
  transfers: () =>
    benchTransfers({
      baseline: text("baseline") ?? "HEAD",
      candidate: text("candidate"),
      seconds: flag("seconds", 8),
      rounds: flag("rounds", 3),
      connections: (text("connections") ?? "16,64").split(",").map(Number).filter((n) => n > 0),
      users: flag("users", 1000),
      keyedShare: Math.min(1, flag("keyed", 0.5, { zero: true })),
      pool: text("pool") ? flag("pool", 10) : undefined,
    }),
  wallet: () => benchWallet({ seconds: flag("seconds", 8), rounds: flag("rounds", 1), connections: flag("connections", 16), users: flag("users", 1000) }),
  versions: () =>
    benchVersions({
      base: text("base") ?? "HEAD",
      head: text("head"),
      workload: (["auth", "not-found", "unmatched", "ai"] as const).find((w) => w === text("workload")) ?? ("auth" satisfies Workload),
      seconds: flag("seconds", 8),
      rounds: flag("rounds", 4),
      connections: flag("connections", 50),
      users: flag("users", 2000),
      delayMs: flag("delay", 500),
      nodeArgsA: text("node-args-a")?.split(/\s+/).filter(Boolean),
      nodeArgsB: text("node-args-b")?.split(/\s+/).filter(Boolean),
    }),
  outbox: () => benchOutbox({ events: flag("events", 10_000), rate: flag("rate", 500), endpoints: flag("endpoints", 50), failingShare: 0.1, recoverAfterSeconds: flag("recover", 10), latencyMs: flag("latency", 100, { zero: true }) }),
  webhooks: () => benchWebhooks({ deliveries: flag("deliveries", 2000), duplicateShare: 0.2, concurrency: flag("concurrency", 64), users: flag("users", 40) }),
};

const bench = benches[name];
if (!bench) {
  console.error(`unknown benchmark '${name}'; choose one of: ${Object.keys(benches).join(", ")}`);
  process.exit(2);
}
try {
  await bench();
} finally {
  // `--keep` leaves the run's databases for a look at its data (EXPLAIN on the seeded profiles).
  if (!rest.includes("--keep")) {
    const dropped = await dropBenchDatabases().catch((err: unknown) => {
      console.error(`could not drop the run's databases: ${String(err)}`);
      return [];
    });
    if (dropped.length > 0) console.log(`dropped the run's databases (${dropped.join(", ")}); --keep leaves them`);
  }
}
process.exit(0);
