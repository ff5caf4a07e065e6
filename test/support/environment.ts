import { afterAll, beforeAll } from "vitest";
import { createTestDatabase, type TestDatabase } from "./database";
import { startTestIssuer, type TestIssuer } from "./issuer";

/**
 * A database of its own for the enclosing file or describe, created before its tests and dropped
 * after them. Read `db` inside hooks and tests: it is set once beforeAll has run.
 */
export function useTestDatabase(options: { migrated?: boolean } = {}): { readonly db: TestDatabase } {
  let db: TestDatabase | undefined;
  beforeAll(async () => {
    db = await createTestDatabase(options);
  });
  afterAll(async () => {
    await db?.drop();
  });
  return {
    get db() {
      return ready(db, "database");
    },
  };
}

/** A database and a loopback OIDC issuer for the enclosing file or describe, set up side by side. */
export function useTestEnvironment(): { readonly db: TestDatabase; readonly issuer: TestIssuer } {
  let db: TestDatabase | undefined;
  let issuer: TestIssuer | undefined;
  beforeAll(async () => {
    [db, issuer] = await Promise.all([createTestDatabase(), startTestIssuer()]);
  });
  afterAll(async () => {
    await Promise.all([db?.drop(), issuer?.close()]);
  });
  return {
    get db() {
      return ready(db, "database");
    },
    get issuer() {
      return ready(issuer, "issuer");
    },
  };
}

function ready<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`the test ${what} is only there once beforeAll has run`);
  return value;
}
