import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export type BugsinkMode = "ok" | "down" | "slow" | "garbage";

export interface FakeBugsinkIssue {
  id: string;
  project: number;
  first_seen: string;
  last_seen: string;
  digested_event_count: number;
  calculated_type: string;
  calculated_value: string;
  transaction: string;
  is_resolved: boolean;
  is_muted: boolean;
}

export interface FakeBugsink {
  url: string;
  token: string;
  /** Paths (with query) asked, in order. */
  requests: string[];
  mode: BugsinkMode;
  projects: { id: number; name: string }[];
  issues: FakeBugsinkIssue[];
  close(): Promise<void>;
}

/**
 * A loopback Bugsink speaking its canonical REST API: `/api/canonical/0/projects/` and
 * `/api/canonical/0/issues/?project=<id>&sort=last_seen&order=desc`, bearer token required,
 * `{next, previous, results}` pages with absolute `next` links (pageSize per page, 250 in Bugsink).
 * Modes: ok; down (503); slow (answers after `slowMs`); garbage (200 with a body that is not the API's).
 */
export async function startFakeBugsink(options: { token?: string; pageSize?: number; slowMs?: number } = {}): Promise<FakeBugsink> {
  const token = options.token ?? "0123456789abcdef0123456789abcdef01234567";
  const pageSize = options.pageSize ?? 250;
  const open = new Set<ServerResponse>();
  const fake: FakeBugsink = { url: "", token, requests: [], mode: "ok", projects: [], issues: [], close: async () => {} };

  const page = <T>(req: IncomingMessage, items: T[], url: URL) => {
    const cursor = Number(url.searchParams.get("cursor") ?? 0);
    const results = items.slice(cursor, cursor + pageSize);
    const nextUrl = new URL(url.pathname + url.search, fake.url);
    nextUrl.searchParams.set("cursor", String(cursor + pageSize));
    return { next: cursor + pageSize < items.length ? nextUrl.toString() : null, previous: null, results };
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    open.add(res);
    res.on("close", () => open.delete(res));
    fake.requests.push(req.url ?? "");
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(typeof body === "string" ? body : JSON.stringify(body));
    };
    if (req.headers.authorization !== `Bearer ${token}`) return send(401, { detail: "Authentication credentials were not provided." });
    if (fake.mode === "down") return send(503, "<html>Service Unavailable</html>");
    if (fake.mode === "garbage") return send(200, { unexpected: ["not", "a", "page"] });
    const answer = () => {
      const url = new URL(req.url ?? "/", fake.url);
      if (url.pathname === "/api/canonical/0/projects/") return send(200, page(req, fake.projects, url));
      if (url.pathname === "/api/canonical/0/issues/") {
        const project = url.searchParams.get("project");
        if (!project) return send(400, { project: ["This field is required."] });
        const desc = url.searchParams.get("order") !== "asc";
        const sorted = fake.issues
          .filter((i) => String(i.project) === project)
          .sort((a, b) => (desc ? b.last_seen.localeCompare(a.last_seen) : a.last_seen.localeCompare(b.last_seen)));
        return send(200, page(req, sorted, url));
      }
      return send(404, { detail: "Not found." });
    };
    if (fake.mode === "slow") setTimeout(answer, options.slowMs ?? 2_000);
    else answer();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () =>
    new Promise<void>((resolve) => {
      for (const res of open) res.destroy();
      server.close(() => resolve());
    });
  return fake;
}
