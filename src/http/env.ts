import type { AppDeps } from "../deps";
import type { Db } from "../db/port";

export type ErrorShape = "standard" | "ai";

export interface AppVariables {
  deps: AppDeps;
  requestId: string;
  db: Db;
  /** Set by the auth middleware once the caller is known; the access log reads it. */
  userId?: string;
  errorShape?: ErrorShape;
  /** The language an AI route answers in; shape 2 errors echo it. */
  language?: string;
}

export interface AppEnv {
  Variables: AppVariables;
}
