import type { SQL } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import type { Db } from "./port";

/** Raw SQL rows; every driver we use (pg, PGlite, Neon) answers execute() with `{ rows }`. */
export async function queryRows<T extends Record<string, unknown>>(db: Db, query: SQL): Promise<T[]> {
  const result = (await db.execute(query)) as unknown as { rows: T[] };
  return result.rows;
}

const dialect = new PgDialect();

/**
 * Raw SQL rows through a named prepared statement, for hot queries whose text has a fixed shape
 * (lists passed as one array parameter, not spliced in). A pooled connection parses and
 * analyses the text once and reuses it after; where a connection lives for one request (Neon on
 * Workers) it costs the same as an unnamed query. The name is a hash of the text, so each shape
 * gets its own statement: a query whose text grows with its input would leave a statement per
 * length on every connection, which is why this is not the default.
 */
export async function preparedRows<T extends Record<string, unknown>>(db: Db, query: SQL): Promise<T[]> {
  const { sql: text, params } = dialect.sqlToQuery(query);
  const prepared = db._.session.prepareQuery({ sql: text, params }, undefined, statementName(text), false);
  const result = (await prepared.execute()) as unknown as { rows: T[] };
  return result.rows;
}

/** A 53-bit hash of the text (cyrb53), as a statement name. */
function statementName(text: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return `q_${(4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(36)}`;
}
