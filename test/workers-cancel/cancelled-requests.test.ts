import { env, exports } from "cloudflare:workers";
import { SignJWT, importJWK, type JWK } from "jose";
import { describe, expect, inject, it } from "vitest";

// In workerd, aborting a request's fetch cancels the Worker's handling of it the way a client that
// goes away does in production: its pending fetches, timers and the rest of its code stop for good.
const worker = exports.default;
const jwk = JSON.parse(inject("issuerSigningJwk")) as JWK & { kid: string; alg: string };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function token(): Promise<string> {
  const sub = `cancel-${crypto.randomUUID()}`;
  return new SignJWT({ sub, email: `${sub}@example.test` })
    .setProtectedHeader({ alg: jwk.alg, kid: jwk.kid, typ: "at+jwt" })
    .setIssuer(String(env.OIDC_ISSUER))
    .setAudience(inject("issuerAudience"))
    .setIssuedAt()
    .setExpirationTime("10m")
    .sign(await importJWK(jwk, jwk.alg));
}

/** A request that gives up after `ms` instead of hanging the test: a hang is what these tests catch. */
async function call(path: string, init: RequestInit = {}, ms = 25_000): Promise<number | "hung"> {
  const gaveUp = sleep(ms).then(() => "hung" as const);
  const answer = worker.fetch(`http://api.test${path}`, init).then(async (res) => {
    await res.arrayBuffer();
    return res.status;
  });
  return Promise.race([answer, gaveUp]);
}

/** Starts a request and cancels it after `ms`, as a client that goes away. */
async function cancelledAfter(ms: number, path: string, init: RequestInit = {}): Promise<void> {
  const controller = new AbortController();
  const pending = worker.fetch(`http://api.test${path}`, { ...init, signal: controller.signal }).catch(() => undefined);
  // Real time must pass: the request is cancelled while inside a service that is slow on the wall
  // clock (global-setup.ts), and nothing inside workerd tells the test how far it has got.
  await sleep(ms);
  controller.abort();
  await pending;
}

describe("a request cancelled in the middle of a load other requests share", () => {
  it("the issuer's discovery: requests that joined it, and later ones, still sign in", async () => {
    const [first, joiner, later] = await Promise.all([token(), token(), token()]);
    // The app is built first, so that the first signed-in request reaches discovery at once.
    expect(await call("/openapi.json")).toBe(200);
    // The first request begins discovery (1.5 s at this issuer); the second joins it; the first is cancelled.
    const cancelled = cancelledAfter(500, "/v1/auth/test", { headers: { authorization: `Bearer ${first}` } });
    // Real time must pass: the second request must arrive while the issuer's 1.5 s discovery is
    // under way, after the first began it and before that one is cancelled at 500 ms.
    await sleep(300);
    const joined = call("/v1/auth/test", { headers: { authorization: `Bearer ${joiner}` } });
    await cancelled;
    expect(await joined).toBe(200);
    expect(await call("/v1/auth/test", { headers: { authorization: `Bearer ${later}` } })).toBe(200);
  });

  it("the knowledge-base snapshot: the next reader still gets it", async () => {
    const auth = { authorization: `Bearer ${await token()}` };
    expect(await call("/v1/auth/test", { headers: auth })).toBe(200);
    // Cancelled while its database session (every chunk 80 ms late) is still loading the snapshot.
    await cancelledAfter(150, "/api/v1/kb", { headers: auth });
    expect(await call("/api/v1/kb", { headers: auth })).toBe(200);
  });
});

describe("AI calls cancelled while the model answers", () => {
  it("free the caller's AI slots: five abandoned calls do not lock a standard member out", async () => {
    const auth = { authorization: `Bearer ${await token()}`, "content-type": "application/json" };
    const chat = { method: "POST", headers: auth, body: JSON.stringify({ message: "how do coins work" }) };
    expect(await call("/api/v1/ai-agents/support/chat", chat)).toBe(200);
    // Five at once is the standard plan's limit; each is cancelled while the host (2 s) answers.
    await Promise.all(Array.from({ length: 5 }, () => cancelledAfter(700, "/api/v1/ai-agents/support/chat", chat)));
    // workerd stops the cancelled calls in its own time, each releasing its slot as it stops, and
    // nothing inside workerd tells the test when: it asks again (429 while the slots are taken)
    // until a call gets through (a refused call takes no slot and counts nowhere). A slot nobody
    // released would stay taken for its lease, 2 minutes.
    const deadline = Date.now() + 15_000;
    let status = await call("/api/v1/ai-agents/support/chat", chat);
    while (status === 429 && Date.now() < deadline) {
      await sleep(100);
      status = await call("/api/v1/ai-agents/support/chat", chat);
    }
    expect(status).toBe(200);
  });
});
