/** Where the real services for integration tests live; CI and developers may override them. */
export const TEST_PG_ADMIN_URL = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

export function randomSuffix(): string {
  return Math.random().toString(36).slice(2, 10);
}
