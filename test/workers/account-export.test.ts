import { env } from "cloudflare:workers";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createWorker } from "../../workers/api";
import { accessToken } from "./access-token";
import { workerBindings } from "./bindings";

// The export on the Workers runtime: the build a request starts runs in its waitUntil, through the
// Neon driver, with the AI context read from Upstash; the download streams from the Worker.

const worker = createWorker();
const bindings = workerBindings(env, "export");


/** One request, with everything it left to waitUntil finished before the answer is read on. */
async function call(path: string, init: RequestInit = {}): Promise<{ status: number; text: string }> {
  const ctx = createExecutionContext();
  const res = await worker.fetch(new Request(`http://api.test${path}`, init), bindings, ctx);
  const text = await res.text();
  await waitOnExecutionContext(ctx);
  return { status: res.status, text };
}

async function signIn(): Promise<{ id: string; headers: Record<string, string> }> {
  const sub = `export-${crypto.randomUUID()}`;
  const token = await accessToken(sub);
  const headers = { authorization: `Bearer ${token}` };
  const me = await call("/v1/auth/test", { headers });
  expect(me.status, me.text).toBe(200);
  return { id: (JSON.parse(me.text) as { user: { id: string } }).user.id, headers };
}

describe("the account export on the Worker", () => {
  it("builds in the request's waitUntil and hands the document out once", async () => {
    const member = await signIn();
    const queued = await call("/api/v1/account/export", { method: "POST", headers: member.headers });
    expect(queued.status, queued.text).toBe(202);
    const { exportId } = JSON.parse(queued.text) as { exportId: string };
    // The build ran in the request's waitUntil, which call() waited for.
    const state = await call(`/api/v1/account/exports/${exportId}`, { headers: member.headers });
    expect(state.status, state.text).toBe(200);
    const ready = JSON.parse(state.text) as { status: string; download: { url: string } };
    expect(ready.status).toBe("ready");
    const first = await call(ready.download.url);
    expect(first.status, first.text).toBe(200);
    expect(JSON.parse(first.text)).toMatchObject({ formatVersion: 1, exportId, account: { userId: member.id }, swipes: [], aiContext: null });
    expect((await call(ready.download.url)).status).toBe(404);
  });
});
