import { sql } from "drizzle-orm";
import type { Db } from "../../src/db/port";
import { queryRows } from "../../src/db/rows";

/**
 * Every column of the migrated schema that refers to a member: a foreign key to users, or a name
 * that says so (`user_id`, `*_user_id`, `*_by`), and `users.id` itself. The export's coverage test
 * and the erasure's test both read this, so a new column fails both until it is classified.
 */
export async function schemaMemberColumns(db: Db): Promise<string[]> {
  const rows = await queryRows<{ col: string }>(
    db,
    sql`select kcu.table_name || '.' || kcu.column_name as col
          from information_schema.table_constraints tc
          join information_schema.key_column_usage kcu on kcu.constraint_name = tc.constraint_name and kcu.table_schema = tc.table_schema
          join information_schema.constraint_column_usage ccu on ccu.constraint_name = tc.constraint_name and ccu.table_schema = tc.table_schema
         where tc.constraint_type = 'FOREIGN KEY' and tc.table_schema = 'public' and ccu.table_name = 'users'
        union
        select table_name || '.' || column_name from information_schema.columns
         where table_schema = 'public' and (column_name = 'user_id' or column_name like '%\\_user\\_id' or column_name like '%\\_by')
        order by 1`,
  );
  return ["users.id", ...rows.map((r) => r.col)];
}
