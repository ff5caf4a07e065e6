import { Pool, type NeonConfig, type WebSocketConstructor } from "@neondatabase/serverless";
import { drizzle } from "drizzle-orm/neon-serverless";
import type { Database, Db, DbSession } from "./port";
import * as schema from "./schema";

export interface NeonDatabaseOptions {
  /** A postgres:// URL; for real Neon, the pooled or direct connection string. */
  url: string;
  /**
   * Local and test use only: the WebSocket-to-TCP proxy as `host:port` or `host:port/path`; the
   * driver appends `?address=<db host>:<db port>`. Unset means Neon's own proxy at the database host.
   */
  wsProxy?: string;
  /** Local and test use only: `ws://` instead of `wss://` to the proxy. */
  insecure?: boolean;
  /** Node before 22 has no global WebSocket; pass `ws` there. Workers use their own. */
  webSocketConstructor?: unknown;
  /** Connections per session. */
  max?: number;
}

// Workers allow six simultaneous outgoing connections per request; one stays free for fetch
// (e.g. Upstash), and a request rarely needs more than one database connection anyway.
const DEFAULT_MAX = 5;

/**
 * The Neon adapter. Workers must not share a socket between requests, so each session gets its
 * own Pool (connections open lazily, on the first query) and release() ends it.
 */
/** Every Neon session owns a pool of its own, so release is always there. */
export interface NeonDatabase extends Database {
  session(): Required<DbSession>;
}

export function createNeonDatabase(options: NeonDatabaseOptions): NeonDatabase {
  const socketSettings = socketSettingsFor(options);
  const open = new Set<Pool>();

  return {
    driver: "neon",
    session(): Required<DbSession> {
      const pool = createPool(options, socketSettings);
      open.add(pool);
      const db: Db = drizzle({ client: pool, schema });
      let released: Promise<void> | undefined;
      return {
        db,
        release() {
          released ??= (async () => {
            open.delete(pool);
            await pool.end();
          })();
          return released;
        },
      };
    },
    async close() {
      const pools = [...open];
      open.clear();
      await Promise.allSettled(pools.map((p) => p.end()));
    },
  };
}

function socketSettingsFor(options: NeonDatabaseOptions): Partial<NeonConfig> {
  const settings: Partial<NeonConfig> = {};
  if (options.wsProxy !== undefined) {
    settings.wsProxy = options.wsProxy;
    // A local proxy fronts a plain Postgres: its auth is not Neon's cleartext password flow that
    // pipelining assumes, and there is no TLS inside the tunnel to pipeline.
    settings.pipelineConnect = false;
    settings.pipelineTLS = false;
  }
  if (options.insecure) settings.useSecureWebSocket = false;
  if (options.webSocketConstructor !== undefined) {
    settings.webSocketConstructor = options.webSocketConstructor as WebSocketConstructor;
  }
  return settings;
}

/**
 * The settings go on each connection's own socket rather than on the global `neonConfig`, so two
 * databases in one process (a test next to real Neon, say) cannot change each other's transport.
 */
function createPool(options: NeonDatabaseOptions, settings: Partial<NeonConfig>): Pool {
  const pool = new Pool({ connectionString: options.url, max: options.max ?? DEFAULT_MAX });
  // An idle connection dropped by the server emits 'error' on the pool; without a listener that
  // would be an uncaught exception. The next query on the pool reports the failure instead.
  pool.on("error", () => {});
  // A connection lost while a request holds it emits 'error' on the client, not the pool; the
  // failed query rejects on its own, so the event only needs a listener.
  pool.on("connect", (client: { on(event: "error", listener: () => void): unknown }) => client.on("error", () => {}));
  if (Object.keys(settings).length > 0) {
    const Base = pool.Client;
    pool.Client = class extends Base {
      constructor(config?: ConstructorParameters<typeof Base>[0]) {
        super(config);
        Object.assign(this.neonConfig, settings);
      }
    };
  }
  return pool;
}
