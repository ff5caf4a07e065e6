import { expect } from "vitest";

export interface ErrorBody {
  error: string;
  message: string;
  code: number;
  requestId: string;
  details?: { path: string; message: string }[];
}

/** Asserts a shape-1 error (status, code, message, request id) and returns its body. */
export async function expectError(res: Response, status: number, error: string): Promise<ErrorBody> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  const body = JSON.parse(text) as ErrorBody;
  expect(body).toMatchObject({ error, code: status });
  expect(typeof body.message).toBe("string");
  expect(body.requestId).toEqual(expect.any(String));
  return body;
}
