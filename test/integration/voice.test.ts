import { createHash } from "node:crypto";
import { gzipSync } from "node:zlib";
import type { AddressInfo } from "node:net";
import { serve, type ServerType } from "@hono/node-server";
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildTestApp, type TestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { expectError } from "../support/errors";
import { startFakeVoiceRuntime, type FakeVoiceRuntime } from "../support/fake-voice-runtime";
import { ENTERPRISE, signIn } from "../support/people";
import { freePort } from "../support/process";
import { waitFor } from "../support/wait";

const env = useTestEnvironment();
const SECRET = "voice-runtime-shared-secret-0123456789";
const MIB = 1024 * 1024;

let runtime: FakeVoiceRuntime;
let t: TestApp;
let server: ServerType;
let base: string;

function voiceApp(extra: Record<string, string> = {}, options: { standardTier?: boolean } = {}): TestApp {
  return buildTestApp({
    database: env.db.database,
    issuer: env.issuer,
    tierLookup: options.standardTier ? undefined : ENTERPRISE,
    env: { VOICE_RUNTIME_URL: runtime.url, VOICE_RUNTIME_SECRET: SECRET, VOICE_MAX_BODY_BYTES: String(8 * MIB), VOICE_TIMEOUT_MS: "2000", ...extra },
  });
}

async function listen(app: TestApp): Promise<{ server: ServerType; base: string }> {
  const s = serve({ fetch: app.app.fetch, port: 0, hostname: "127.0.0.1" });
  await new Promise<void>((resolve) => s.once("listening", () => resolve()));
  return { server: s, base: `http://127.0.0.1:${(s.address() as AddressInfo).port}` };
}

const close = (s: ServerType) => new Promise<void>((resolve) => s.close(() => resolve()));

beforeAll(async () => {
  runtime = await startFakeVoiceRuntime(SECRET);
  t = voiceApp();
  ({ server, base } = await listen(t));
});

afterAll(async () => {
  await close(server);
  await runtime.close();
});

function pattern(size: number, seed: number): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i += 1) bytes[i] = (i * 31 + seed) & 0xff;
  return bytes;
}

const sha256 = (parts: Uint8Array[]) => {
  const h = createHash("sha256");
  for (const p of parts) h.update(p);
  return h.digest("hex");
};

describe("POST /api/v1/voice/stt", () => {
  it("streams a 5 MiB chunked body through: the runtime reads its start before the client has sent the rest", async () => {
    const me = await signIn(t, env.issuer);
    const head = pattern(MIB, 1);
    const tail = pattern(4 * MIB, 2);
    let released = false;
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(head);
        // Held back until the runtime has most of the first MiB: a proxy that buffered the whole
        // body before calling the runtime would never get there, and the test would fail here.
        const reached = await Promise.race([runtime.received("/stt", 512 * 1024).then(() => true), new Promise((r) => setTimeout(() => r(false), 5_000))]);
        if (!reached) {
          controller.error(new Error("the runtime saw nothing while the client was still sending: the proxy buffers"));
          return;
        }
        released = true;
        for (let i = 0; i < tail.length; i += 256 * 1024) controller.enqueue(tail.subarray(i, i + 256 * 1024));
        controller.close();
      },
    });
    const res = await fetch(`${base}/api/v1/voice/stt?language=fr`, {
      method: "POST",
      headers: { ...me.headers, "content-type": "audio/wav" },
      body,
      duplex: "half",
    } as RequestInit);
    expect(res.status).toBe(200);
    expect(released).toBe(true);
    expect(res.headers.get("content-type")).toBe("application/json");
    const answer = (await res.json()) as { bytes: number; sha256: string; contentType: string };
    expect(answer).toMatchObject({ bytes: 5 * MIB, sha256: sha256([head, tail]), contentType: "audio/wav" });

    const seen = runtime.calls.at(-1)!;
    expect(seen.search).toBe("?language=fr");
    expect(seen.headers["transfer-encoding"]).toBe("chunked");
    expect(seen.identity).toMatchObject({ sub: me.id, role: "user", htm: "POST", htp: "/stt", jti: expect.stringMatching(/^vtk_/) });
    expect(seen.identity!.exp! - seen.identity!.iat!).toBe(60);
  });

  it("keeps a declared Content-Length and passes the body on unchanged", async () => {
    const me = await signIn(t, env.issuer);
    const audio = pattern(5 * MIB, 9);
    const res = await fetch(`${base}/api/v1/voice/stt`, { method: "POST", headers: { ...me.headers, "content-type": "audio/ogg" }, body: audio });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ bytes: 5 * MIB, sha256: sha256([audio]), contentType: "audio/ogg" });
    expect(runtime.calls.at(-1)!.headers["content-length"]).toBe(String(5 * MIB));
  });

  it("answers 413 from the declared length alone, without calling the runtime", async () => {
    const me = await signIn(t, env.issuer);
    const before = runtime.calls.length;
    const res = await fetch(`${base}/api/v1/voice/stt`, { method: "POST", headers: { ...me.headers, "content-type": "audio/wav" }, body: pattern(8 * MIB + 1, 3) });
    await expectError(res, 413, "payload_too_large");
    expect(runtime.calls.length).toBe(before);
  });

  it("answers 413 when a chunked body passes the limit while streaming, and stops feeding the runtime", async () => {
    const me = await signIn(t, env.issuer);
    const chunk = pattern(MIB, 4);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 20) return controller.close();
        sent += 1;
        controller.enqueue(chunk);
      },
    });
    const res = await fetch(`${base}/api/v1/voice/stt`, { method: "POST", headers: { ...me.headers, "content-type": "audio/wav" }, body, duplex: "half" } as RequestInit);
    await expectError(res, 413, "payload_too_large");
    const seen = runtime.calls.at(-1)!;
    await seen.bodyDone;
    expect(seen.bytes).toBeLessThanOrEqual(8 * MIB);
    expect(seen.ended).toBe(false);
  });

  it("forwards only its own identity: forged identity headers, the bearer token and cookies stay behind", async () => {
    const me = await signIn(t, env.issuer);
    const forged = await new SignJWT({ role: "admin", htm: "POST", htp: "/stt" })
      .setProtectedHeader({ alg: "HS256" })
      .setIssuer("platform-api")
      .setAudience("voice-runtime")
      .setSubject("usr_someone_else")
      .setIssuedAt()
      .setExpirationTime("1m")
      .sign(new TextEncoder().encode(SECRET));
    const res = await t.request("/api/v1/voice/stt", {
      method: "POST",
      headers: {
        ...me.headers,
        "content-type": "audio/wav",
        cookie: "session=abc",
        "x-voice-identity": forged,
        "x-voice-user-id": "usr_someone_else",
        "x-forwarded-user": "usr_someone_else",
      },
      body: pattern(1000, 5),
    });
    expect(res.status).toBe(200);
    const seen = runtime.calls.at(-1)!;
    expect(seen.identity).toMatchObject({ sub: me.id, role: "user" });
    expect(seen.headers["x-voice-identity"]).not.toBe(forged);
    for (const name of ["authorization", "cookie", "x-voice-user-id", "x-forwarded-user"]) expect(seen.headers[name], name).toBeUndefined();
  });
});

describe("POST /api/v1/voice/tts", () => {
  it("streams the answer back as the runtime sends it, with its type and length", async () => {
    const me = await signIn(t, env.issuer);
    let sendRest!: () => void;
    const restAllowed = new Promise<void>((resolve) => (sendRest = resolve));
    const first = pattern(32 * 1024, 6);
    const rest = pattern(96 * 1024, 7);
    runtime.handle(async (req, res) => {
      req.resume();
      res.writeHead(200, { "content-type": "audio/mpeg", "content-length": String(first.length + rest.length) });
      res.write(first);
      await restAllowed;
      res.end(rest);
    });
    try {
      const res = await fetch(`${base}/api/v1/voice/tts`, {
        method: "POST",
        headers: { ...me.headers, "content-type": "application/json" },
        body: JSON.stringify({ text: "hello", voice: "a" }),
      });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("audio/mpeg");
      expect(res.headers.get("content-length")).toBe(String(first.length + rest.length));
      const reader = res.body!.getReader();
      let got = 0;
      // The runtime holds the rest until we have bytes: a buffering proxy would hang here.
      while (got < first.length) got += (await reader.read()).value!.byteLength;
      expect(got).toBe(first.length);
      sendRest();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        got += value.byteLength;
      }
      expect(got).toBe(first.length + rest.length);
      expect(runtime.calls.at(-1)!.identity).toMatchObject({ sub: me.id, htp: "/tts" });
    } finally {
      runtime.handle(undefined);
    }
  });

  it("passes on a whole answer from a runtime that compresses anyway, and asks it not to", async () => {
    const me = await signIn(t, env.issuer);
    const transcript = JSON.stringify({ text: "word ".repeat(2_400) });
    runtime.handle((req, res) => {
      req.resume();
      const packed = gzipSync(transcript);
      res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip", "content-length": String(packed.length) }).end(packed);
    });
    try {
      const res = await fetch(`${base}/api/v1/voice/tts`, {
        method: "POST",
        headers: { ...me.headers, "content-type": "application/json" },
        body: JSON.stringify({ text: "hello", voice: "a" }),
      });
      expect(res.status).toBe(200);
      expect(await res.text()).toBe(transcript);
      expect(runtime.calls.at(-1)!.headers["accept-encoding"]).toBe("identity");
    } finally {
      runtime.handle(undefined);
    }
  });

  it("gives every identity token its own jti, even when the client reuses its request id", async () => {
    const me = await signIn(t, env.issuer);
    const send = () =>
      fetch(`${base}/api/v1/voice/tts`, {
        method: "POST",
        headers: { ...me.headers, "content-type": "application/json", "x-request-id": "req_01m8f4dt4reg5k6qxcfy7hxfra" },
        body: JSON.stringify({ text: "hello", voice: "a" }),
      }).then((r) => r.arrayBuffer());
    await send();
    await send();
    const [a, b] = runtime.calls.slice(-2).map((c) => c.identity?.jti);
    expect(a).toMatch(/^vtk_/);
    expect(b).toMatch(/^vtk_/);
    expect(a).not.toBe(b);
  });

  it("cuts an answer that stalls longer than the timeout", async () => {
    const me = await signIn(t, env.issuer);
    const slow = voiceApp({ VOICE_TIMEOUT_MS: "300" });
    runtime.handle((req, res) => {
      req.resume();
      res.writeHead(200, { "content-type": "audio/mpeg" });
      res.write(pattern(1024, 1)); // and then nothing
    });
    try {
      const res = await slow.request("/api/v1/voice/tts", { method: "POST", headers: { ...me.headers, "content-type": "application/json" }, body: "{}" });
      expect(res.status).toBe(200);
      const started = Date.now();
      await expect(res.arrayBuffer()).rejects.toThrow();
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(slow.logs.some((l) => l.msg === "voice answer broke off" && l.timedOut === true)).toBe(true);
    } finally {
      runtime.handle(undefined);
    }
  });
});

describe("POST /api/v1/voice/agent", () => {
  it("passes any content type both ways, echoing what the runtime streams back", async () => {
    const me = await signIn(t, env.issuer);
    const res = await t.request("/api/v1/voice/agent", { method: "POST", headers: { ...me.headers, "content-type": "audio/webm;codecs=opus" }, body: pattern(4096, 8) });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("audio/webm;codecs=opus");
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(pattern(4096, 8));
    expect(res.headers.get("x-ai-ratelimit-limit")).toBeTruthy();
  });

  it("holds the caller's AI concurrency slot until the streamed answer ends", async () => {
    const app = voiceApp({}, { standardTier: true });
    const me = await signIn(app, env.issuer);
    let finishAll!: () => void;
    const gate = new Promise<void>((resolve) => (finishAll = resolve));
    runtime.handle(async (req, res) => {
      req.resume();
      res.writeHead(200, { "content-type": "audio/mpeg" });
      res.write(pattern(16, 1));
      await gate;
      res.end();
    });
    try {
      const call = () => app.request("/api/v1/voice/agent", { method: "POST", headers: { ...me.headers, "content-type": "audio/wav" }, body: "x" });
      // standard: 5 AI requests at once. These five have their headers and are still streaming.
      const open = await Promise.all(Array.from({ length: 5 }, call));
      expect(open.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
      const sixth = await call();
      const body = await expectError(sixth, 429, "rate_limit_exceeded");
      expect(body.message).toMatch(/at once/i);
      finishAll();
      await Promise.all(open.map((r) => r.arrayBuffer()));
      runtime.handle(undefined);
      // The slots are released once each stream has ended, a moment after its last byte.
      await waitFor("a free AI slot", async () => {
        const res = await call();
        await res.arrayBuffer();
        return res.status === 200;
      });
    } finally {
      finishAll();
      runtime.handle(undefined);
    }
  });
});

describe("a client that goes away", () => {
  it("cancels the runtime call and frees its AI slot", async () => {
    const app = voiceApp({ VOICE_TIMEOUT_MS: "10000" }, { standardTier: true });
    const me = await signIn(app, env.issuer);
    const { server: s, base: url } = await listen(app);
    let closedEarly = 0;
    let reached = 0;
    runtime.handle((req, res) => {
      reached++;
      req.resume();
      // Answers only after 3 s; a proxy that gave up hangs up long before.
      const timer = setTimeout(() => res.writeHead(200, { "content-type": "audio/mpeg" }).end("late"), 3_000);
      res.on("close", () => {
        if (!res.writableFinished) closedEarly++;
        clearTimeout(timer);
      });
    });
    try {
      const call = (signal?: AbortSignal) =>
        fetch(`${url}/api/v1/voice/agent`, { method: "POST", headers: { ...me.headers, "content-type": "audio/wav" }, body: "x", signal });
      // standard: 5 AI requests at once. Five callers give up once their calls are at the runtime
      // (after a fixed 200 ms, a slow start could have them give up before, with nothing to cancel).
      const callers = Array.from({ length: 5 }, () => new AbortController());
      const calls = callers.map((c) => call(c.signal));
      await waitFor("the five calls at the runtime", () => reached === 5);
      for (const c of callers) c.abort();
      const gaveUp = await Promise.allSettled(calls);
      expect(gaveUp.every((r) => r.status === "rejected")).toBe(true);
      // Cancelled before the runtime answers (3 s): an answered call is not counted.
      await waitFor("the five runtime calls to be cancelled", () => closedEarly === 5);
      runtime.handle(undefined);
      // Their slots are free again well before the runtime would have answered them.
      expect((await call()).status).toBe(200);
    } finally {
      runtime.handle(undefined);
      await close(s);
    }
  });
});

describe("when the runtime cannot serve", () => {
  it("answers 503 when the runtime is not configured", async () => {
    const app = buildTestApp({ database: env.db.database, issuer: env.issuer, tierLookup: ENTERPRISE });
    const me = await signIn(app, env.issuer);
    const body = await expectError(await app.request("/api/v1/voice/stt", { method: "POST", headers: { ...me.headers, "content-type": "audio/wav" }, body: "x" }), 503, "service_unavailable");
    expect(body.message).toMatch(/not configured/);
  });

  it("answers 503 when the runtime is unreachable", async () => {
    const app = voiceApp({ VOICE_RUNTIME_URL: `http://127.0.0.1:${await freePort()}` });
    const me = await signIn(app, env.issuer);
    const body = await expectError(await app.request("/api/v1/voice/stt", { method: "POST", headers: { ...me.headers, "content-type": "audio/wav" }, body: "x" }), 503, "service_unavailable");
    expect(body.message).toMatch(/unreachable/);
  });

  it("answers 503 when the runtime does not answer within the timeout", async () => {
    const app = voiceApp({ VOICE_TIMEOUT_MS: "300" });
    const me = await signIn(app, env.issuer);
    runtime.handle(() => undefined); // never answers
    try {
      const started = Date.now();
      const body = await expectError(await app.request("/api/v1/voice/stt", { method: "POST", headers: { ...me.headers, "content-type": "audio/wav" }, body: "x" }), 503, "service_unavailable");
      expect(body.message).toMatch(/within 300 ms/);
      expect(Date.now() - started).toBeLessThan(2_000);
    } finally {
      runtime.handle(undefined);
    }
  });

  it("answers 503 and logs an error when the runtime refuses our identity (secrets differ)", async () => {
    const app = voiceApp({ VOICE_RUNTIME_SECRET: "a-different-secret-0123456789abcdef" });
    const me = await signIn(app, env.issuer);
    await expectError(await app.request("/api/v1/voice/stt", { method: "POST", headers: { ...me.headers, "content-type": "audio/wav" }, body: "x" }), 503, "service_unavailable");
    expect(runtime.calls.at(-1)!.identityError).toMatch(/signature/);
    expect(app.logs.some((l) => l.level === "error" && String(l.msg).includes("VOICE_RUNTIME_SECRET"))).toBe(true);
  });

  it("maps the runtime's own refusals onto our error set", async () => {
    const me = await signIn(t, env.issuer);
    const answer = (status: number, body: string) =>
      runtime.handle((req, res) => {
        req.resume();
        res.writeHead(status, { "content-type": "application/json", "retry-after": "7" }).end(body);
      });
    try {
      answer(415, JSON.stringify({ message: "unsupported audio codec" }));
      const bad = await expectError(await t.request("/api/v1/voice/stt", { method: "POST", headers: { ...me.headers, "content-type": "audio/x-odd" }, body: "x" }), 400, "invalid_input");
      expect(bad.details).toEqual([{ path: "(body)", message: "unsupported audio codec" }]);
      answer(429, "{}");
      const busy = await t.request("/api/v1/voice/stt", { method: "POST", headers: { ...me.headers, "content-type": "audio/wav" }, body: "x" });
      await expectError(busy, 503, "service_unavailable");
      expect(busy.headers.get("retry-after")).toBe("7");
      answer(500, "Traceback (most recent call last): secret internals");
      const failed = await t.request("/api/v1/voice/stt", { method: "POST", headers: { ...me.headers, "content-type": "audio/wav" }, body: "x" });
      const text = await failed.text();
      expect(failed.status).toBe(503);
      expect(text).not.toContain("Traceback");
    } finally {
      runtime.handle(undefined);
    }
  });
});

describe("request bodies", () => {
  it("accepts any content type on voice routes only", async () => {
    const me = await signIn(t, env.issuer);
    await expectError(
      await t.request("/api/v1/wallet/transfer", { method: "POST", headers: { ...me.headers, "content-type": "audio/wav" }, body: "x" }),
      400,
      "invalid_input",
    );
  });

  it("keeps the 1 MiB limit for other routes", async () => {
    const me = await signIn(t, env.issuer);
    const res = await fetch(`${base}/api/v1/wallet/transfer`, { method: "POST", headers: { ...me.headers, "content-type": "application/json" }, body: JSON.stringify({ note: "x".repeat(MIB) }) });
    await expectError(res, 413, "payload_too_large");
  });
});
