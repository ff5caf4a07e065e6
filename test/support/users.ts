import type { TestIssuer } from "./issuer";
import { randomSuffix } from "./services";

export interface TestUser {
  sub: string;
  email: string;
  token: string;
  headers: Record<string, string>;
}

/** A brand-new person for one test: tests never share users. */
export async function newUser(issuer: TestIssuer, options: { admin?: boolean } = {}): Promise<TestUser> {
  const sub = `user-${randomSuffix()}${randomSuffix()}`;
  const email = `${sub}@example.test`;
  const token = await issuer.sign({ sub, email, roles: options.admin ? ["admin"] : [] }, { expiresIn: "1h" });
  return { sub, email, token, headers: { authorization: `Bearer ${token}` } };
}

export function json(body: unknown, headers: Record<string, string> = {}): RequestInit {
  return { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) };
}
