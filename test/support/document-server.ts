import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll } from "vitest";
import type { HostResolver } from "../../src/services/kb/url-fetch";

/**
 * A loopback web server with the pages an asset URL may point at: documents of each accepted
 * type, redirects (to itself and to private addresses), a body larger than the cap, a type that
 * is not accepted, and a page that never finishes.
 */
export interface DocumentServer {
  port: number;
  /** Paths requested so far, to prove a refused URL was never fetched. */
  hits: string[];
  close(): Promise<void>;
}

export const GUIDE_MD = "# Photo verification\n\n## How to verify your photos\nOpen Settings, Verify photos, and take a selfie matching the pose shown. Verified profiles get a blue tick within ten minutes.\n";
export const GUIDE_HTML = `<!doctype html><html><head><title>Travel mode</title><style>p{color:red}</style><script>alert(1)</script></head>
<body><h1>Travel mode</h1><h2>Changing your city</h2><p>Premium members can set a travel city &amp; appear there for 7 days.</p></body></html>`;

/** A document server for the enclosing file or describe, started before its tests and closed after. */
export function useDocumentServer(): Pick<DocumentServer, "port" | "hits"> {
  let server: DocumentServer | undefined;
  beforeAll(async () => {
    server = await startDocumentServer();
  });
  afterAll(async () => {
    await server?.close();
  });
  const started = (): DocumentServer => {
    if (!server) throw new Error("the document server is only there once beforeAll has run");
    return server;
  };
  return {
    get port() {
      return started().port;
    },
    get hits() {
      return started().hits;
    },
  };
}

export async function startDocumentServer(): Promise<DocumentServer> {
  const hits: string[] = [];
  let port = 0;
  const server: Server = createServer((req, res) => {
    const path = req.url ?? "/";
    hits.push(path);
    const send = (status: number, type: string, body: string) => {
      res.writeHead(status, { "content-type": type, "content-length": Buffer.byteLength(body) });
      res.end(body);
    };
    const redirect = (location: string) => {
      res.writeHead(302, { location });
      res.end();
    };
    switch (path) {
      case "/guide.md":
        return send(200, "text/markdown; charset=utf-8", GUIDE_MD);
      case "/travel.html":
        return send(200, "text/html; charset=utf-8", GUIDE_HTML);
      case "/moved":
        return redirect("/guide.md");
      case "/to-loopback":
        return redirect(`http://127.0.0.1:${port}/guide.md`);
      case "/to-metadata":
        return redirect("http://169.254.169.254/latest/meta-data/iam/security-credentials/");
      case "/to-private-name":
        return redirect(`http://internal.example:${port}/guide.md`);
      case "/to-file":
        return redirect("file:///etc/passwd");
      case "/to-unparsable":
        return redirect("http://[::1");
      case "/to-bad-port":
        return redirect("https://docs.test:99999/x");
      case "/image.png":
        return send(200, "image/png", "\x89PNG....");
      case "/huge": {
        // No Content-Length: the cap must hold while streaming, not only on the header.
        res.writeHead(200, { "content-type": "text/plain" });
        const chunk = "x".repeat(1024 * 1024);
        let sent = 0;
        const pump = () => {
          while (sent < 12) {
            sent++;
            if (!res.write(chunk)) return res.once("drain", pump);
          }
          res.end();
        };
        return pump();
      }
      case "/huge-declared":
        res.writeHead(200, { "content-type": "text/plain", "content-length": String(11 * 1024 * 1024) });
        return res.end();
      default:
        return send(404, "text/plain", "not found");
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
  return {
    port,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Test name resolution: a fixed table, so "a name resolving to loopback" can be tested. */
export function tableResolver(table: Record<string, string[]>): HostResolver & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    async resolve(hostname) {
      asked.push(hostname);
      const found = table[hostname];
      if (!found) throw new Error(`ENOTFOUND ${hostname}`);
      return found;
    },
  };
}

/**
 * The test network: made-up names route to the loopback document server, as a real network
 * would route them to their hosts. Every other URL goes out unchanged (to loopback fakes).
 */
export function routedFetch(names: string[]): typeof fetch {
  return (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (names.includes(url.hostname)) url.hostname = "127.0.0.1";
    return globalThis.fetch(url, init);
  };
}
