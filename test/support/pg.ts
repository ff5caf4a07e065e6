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
