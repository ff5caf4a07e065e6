import { index, integer, jsonb, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { users } from "../schema";
import type { WorkflowGraph } from "../../services/workflows/graph";

/**
 * Messaging workflows admins draw. The graph is stored whole as jsonb with a version that counts
 * its changes, so the engine's copy can be known to be current (`synced_version = version`).
 */
export const messagingWorkflows = pgTable(
  "messaging_workflows",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    description: text("description"),
    graph: jsonb("graph").$type<WorkflowGraph>().notNull(),
    version: integer("version").notNull().default(1),
    /** The automation engine's id of its copy; null until the first sync. */
    engineId: text("engine_id"),
    syncedVersion: integer("synced_version"),
    syncedAt: timestamp("synced_at", { withTimezone: true, mode: "date" }),
    createdBy: text("created_by")
      .notNull()
      .references(() => users.id),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull(),
    updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull(),
  },
  (t) => [index("messaging_workflows_created_idx").on(t.createdAt, t.id)],
);
