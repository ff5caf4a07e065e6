import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** What the agent saw of one call. */
export interface AgentCallSeen {
  authorization: string | undefined;
  cookie: string | undefined;
  contentType: string | undefined;
  body: string;
  /** Set when the caller went away before the answer ended. */
  closedEarly: boolean;
  /** Settles when the answer has ended or the caller has gone away. */
  finished: Promise<void>;
}

export interface FakePlatformAgent {
  url: string;
  calls: AgentCallSeen[];
  /**
   * Lets the streaming answer in progress send its next event (each call's events wait for one
   * release each), so a test can see an event arrive before the next one exists.
   */
  release(): void;
  /** Answers the next calls with this status and JSON body instead of streaming. */
  refuseWith(status: number | undefined): void;
  close(): Promise<void>;
}

/**
 * A loopback platform agent: `POST /` with a bearer answers a server-sent event stream of three
 * `delta` events (the words of "Hello from the agent") and a final `done`, each sent only when the
 * test releases it; without a bearer, 401 as the real service answers.
 */
export async function startFakePlatformAgent(options: { gated?: boolean } = {}): Promise<FakePlatformAgent> {
  const calls: AgentCallSeen[] = [];
  let waiting: (() => void)[] = [];
  let released = 0;
  let refusal: number | undefined;
  const nextRelease = (): Promise<void> => {
    if (!options.gated) return Promise.resolve();
    if (released > 0) {
      released -= 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => waiting.push(resolve));
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let finish!: () => void;
    const seen: AgentCallSeen = {
      authorization: req.headers.authorization,
      cookie: req.headers.cookie,
      contentType: req.headers["content-type"],
      body: "",
      closedEarly: false,
      finished: new Promise<void>((resolve) => (finish = resolve)),
    };
    calls.push(seen);
    res.on("close", () => {
      if (!res.writableFinished) seen.closedEarly = true;
      finish();
    });
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      seen.body = Buffer.concat(chunks).toString("utf8");
      void answer(req, res, seen);
    });
  });

  async function answer(req: IncomingMessage, res: ServerResponse, seen: AgentCallSeen): Promise<void> {
    if (req.method !== "POST") return void res.writeHead(405).end();
    if (!seen.authorization?.startsWith("Bearer ")) {
      res.writeHead(401, { "content-type": "application/json" }).end(JSON.stringify({ error: "unauthorized" }));
      return;
    }
    if (refusal !== undefined) {
      res.writeHead(refusal, { "content-type": "application/json" }).end(JSON.stringify({ error: "refused", status: refusal }));
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    res.flushHeaders();
    for (const word of ["Hello", " from", " the agent"]) {
      await nextRelease();
      if (seen.closedEarly) return;
      res.write(`event: delta\ndata: ${JSON.stringify({ text: word })}\n\n`);
    }
    await nextRelease();
    if (seen.closedEarly) return;
    res.end(`event: done\ndata: {}\n\n`);
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    calls,
    release() {
      const first = waiting[0];
      if (first) {
        waiting = waiting.slice(1);
        first();
      } else released += 1;
    },
    refuseWith(status) {
      refusal = status;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
