// The outbox's delivery loop in a process of its own, for kill -9 tests: DATABASE_URL names the
// database, HOOK_HOSTS the made-up host names routed to loopback (the test network), LEASE_MS the
// claim lease, BATCH and IDLE_MS the loop's batch and idle wait, MAX_IN_FLIGHT the claimed rows it holds
// at most (default BATCH). It prints "ready" once the loop runs.
import { createPgDatabase } from "../../src/node/database";
import { createIdGenerator, webRandom } from "../../src/platform/ids";
import { systemClock } from "../../src/platform/clock";
import { createJsonLogger } from "../../src/platform/logger";
import { sqlDeliveryRecords } from "../../src/services/delivery-records/records";
import { startOutboxLoop } from "../../src/services/outbox/loop";
import { routedFetch, tableResolver } from "./document-server";

const hosts = (process.env.HOOK_HOSTS ?? "").split(",").filter(Boolean);
const database = createPgDatabase(process.env.DATABASE_URL as string, { max: 10 });
const ids = createIdGenerator(systemClock, webRandom);
startOutboxLoop(
  {
    db: database.session().db,
    clock: systemClock,
    random: webRandom,
    ids,
    logger: createJsonLogger({ level: "warn" }),
    fetch: routedFetch(hosts),
    resolver: tableResolver(Object.fromEntries(hosts.map((h) => [h, ["127.0.0.1"]]))),
    allowedHosts: hosts,
    production: false,
    records: sqlDeliveryRecords(ids),
    leaseMs: Number(process.env.LEASE_MS ?? 60_000),
  },
  { batch: Number(process.env.BATCH ?? 20), idleMs: Number(process.env.IDLE_MS ?? 50), maxInFlight: Number(process.env.MAX_IN_FLIGHT ?? process.env.BATCH ?? 20) },
);
console.log("ready");
