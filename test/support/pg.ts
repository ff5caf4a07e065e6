import pg from "pg";
import { TEST_PG_ADMIN_URL } from "./services";

/** The URL of database `name` on the test server. */
export function databaseUrl(name: string): string {
  const url = new URL(TEST_PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/** `host:port` of the test server, as a Neon WebSocket proxy names its targets. */
export function serverAddress(): string {
  const url = new URL(TEST_PG_ADMIN_URL);
  return `${url.hostname}:${url.port || "5432"}`;
}

/** Runs `fn` on a connection of its own to `url`, closed afterwards whatever happens. */
export async function withPgClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * How many other backends of the client's database wait for a lock now. pg_stat_activity is read
 * once per transaction and kept, so a client inside a transaction (a test's lock holder) would
 * see the first answer forever: the snapshot is dropped before each read.
 */
export async function lockWaiters(client: pg.Client): Promise<number> {
  await client.query("select pg_stat_clear_snapshot()");
  const { rows } = await client.query<{ n: number }>(
    "select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and pid <> pg_backend_pid()",
  );
  return rows[0]?.n ?? 0;
}
