import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { jwtVerify, type JWTPayload } from "jose";

/** What the runtime saw of one call, filled in as the body arrives. */
export interface VoiceCallSeen {
  path: string;
  search: string;
  headers: IncomingMessage["headers"];
  /** The verified identity token's claims; undefined when it was missing or did not verify. */
  identity?: JWTPayload & { role?: string; htm?: string; htp?: string };
  identityError?: string;
  bytes: number;
  sha256?: string;
  ended: boolean;
  /** Settles when the whole body has arrived, or the client went away. */
  bodyDone: Promise<void>;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, seen: VoiceCallSeen) => void | Promise<void>;

export interface FakeVoiceRuntime {
  url: string;
  secret: string;
  calls: VoiceCallSeen[];
  /** Replaces the runtime's behaviour for the next calls (until reset). */
  handle(handler: Handler | undefined): void;
  /** Resolves once some call to `path` has received at least `bytes` bytes of its body. */
  received(path: string, bytes: number): Promise<VoiceCallSeen>;
  close(): Promise<void>;
}

export const RUNTIME_ISSUER = "platform-api";
export const RUNTIME_AUDIENCE = "voice-runtime";

/**
 * A loopback voice runtime doing what the real one must: it verifies the platform's identity token
 * (HS256 with the shared secret, issuer, audience, expiry, and the path it was made for) and
 * refuses the call with 401 otherwise. By default `/stt` reads the audio as it streams and answers
 * a transcript of what it got, `/tts` answers audio in chunks, `/agent` streams the body back.
 */
export async function startFakeVoiceRuntime(secret: string): Promise<FakeVoiceRuntime> {
  const calls: VoiceCallSeen[] = [];
  const waiters: { path: string; bytes: number; resolve: (s: VoiceCallSeen) => void }[] = [];
  let custom: Handler | undefined;

  const notify = (seen: VoiceCallSeen) => {
    for (const w of [...waiters]) {
      if (w.path === seen.path && seen.bytes >= w.bytes) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(seen);
      }
    }
  };

  const server: Server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? "/", "http://runtime");
      const bodyDone = new Promise<void>((resolve) => {
        req.on("end", () => resolve());
        req.on("close", () => resolve());
      });
      const seen: VoiceCallSeen = { path: url.pathname, search: url.search, headers: req.headers, bytes: 0, ended: false, bodyDone };
      calls.push(seen);
      try {
        const token = req.headers["x-voice-identity"];
        if (typeof token !== "string") throw new Error("no identity token");
        const { payload } = await jwtVerify(token, new TextEncoder().encode(secret), {
          algorithms: ["HS256"],
          issuer: RUNTIME_ISSUER,
          audience: RUNTIME_AUDIENCE,
          maxTokenAge: "2m",
          clockTolerance: 30,
        });
        if (payload.htp !== url.pathname || payload.htm !== req.method) throw new Error("token made for another call");
        seen.identity = payload;
      } catch (err) {
        seen.identityError = err instanceof Error ? err.message : String(err);
        req.resume();
        res.writeHead(401, { "content-type": "application/json" }).end(JSON.stringify({ error: "unauthorized", message: seen.identityError }));
        return;
      }
      // Counted only from here: listening for data earlier would drain the body before a handler
      // that pipes it got the chance.
      const hash = createHash("sha256");
      req.on("data", (chunk: Buffer) => {
        seen.bytes += chunk.length;
        hash.update(chunk);
        notify(seen);
      });
      req.on("end", () => {
        seen.ended = true;
        seen.sha256 = hash.digest("hex");
        notify(seen);
      });
      await (custom ?? defaultHandler)(req, res, seen);
    })().catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(err));
      else res.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));

  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    secret,
    calls,
    handle: (h) => {
      custom = h;
    },
    received: (path, bytes) => {
      const hit = calls.find((s) => s.path === path && s.bytes >= bytes);
      return hit ? Promise.resolve(hit) : new Promise((resolve) => waiters.push({ path, bytes, resolve }));
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const defaultHandler: Handler = async (req, res, seen) => {
  if (seen.path === "/stt") {
    await seen.bodyDone;
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ text: "hello there", bytes: seen.bytes, sha256: seen.sha256, contentType: req.headers["content-type"] ?? null }));
    return;
  }
  if (seen.path === "/tts") {
    req.resume();
    const chunk = Buffer.alloc(16 * 1024, 7);
    res.writeHead(200, { "content-type": "audio/mpeg", "content-length": String(chunk.length * 4) });
    for (let i = 0; i < 4; i += 1) res.write(chunk);
    res.end();
    return;
  }
  if (seen.path === "/agent") {
    res.writeHead(200, { "content-type": req.headers["content-type"] ?? "application/octet-stream" });
    req.pipe(res);
    return;
  }
  req.resume();
  res.writeHead(404).end();
};
