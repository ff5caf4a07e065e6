import { ApiError } from "../errors";

export type Role = "user" | "admin";

/** Who is calling. An API key acts as the admin who created it. */
export interface Principal {
  userId: string;
  email: string | null;
  role: Role;
  credential: "token" | "api_key";
  keyId?: string;
  /**
   * When the credential stops working by itself (a token's `exp`, an API key's `expiresAt`), in
   * milliseconds since the epoch; absent for a key without expiry. What outlives the request (an
   * event stream) ends then.
   */
  expiresAt?: number;
  /** When the account was deleted (ms since the epoch); absent for an active account. */
  deletedAt?: number;
}

export function permissionsOf(role: Role): string[] {
  return role === "admin" ? ["read", "write", "admin"] : ["read", "write"];
}

export function assertAdmin(principal: Principal): void {
  if (principal.role !== "admin") throw new ApiError("forbidden", "admin role required");
}
