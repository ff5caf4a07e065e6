import { createWebApp, type WebApp } from "../../src/web/app";
import { parseWebConfig } from "../../src/web/config";
import type { WebDeps } from "../../src/web/deps";
import type { Clock } from "../../src/platform/clock";
import { createIdGenerator, webRandom } from "../../src/platform/ids";
import { createWebLogger } from "../../src/web/logger";

export const WEB_COOKIE_SECRET = "web-cookie-secret-for-tests-0123456789abcdef";

export interface TestWeb {
  app: WebApp;
  deps: WebDeps;
  logs: Record<string, unknown>[];
  /** Outbound calls the web app made (issuer and agent), for counting refreshes. */
  outbound: { url: string; body: string }[];
}

/** The web app built as its entries build it: createWebApp over deps from parsed config. */
export async function buildTestWeb(options: { env: Record<string, string>; clock: Clock; api: (path: string, init: RequestInit) => Promise<Response> }): Promise<TestWeb> {
  const logs: Record<string, unknown>[] = [];
  const outbound: { url: string; body: string }[] = [];
  const config = parseWebConfig({ NODE_ENV: "test", LOG_LEVEL: "debug", WEB_COOKIE_SECRET, ...options.env });
  const fetchCounted: typeof fetch = async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    outbound.push({ url, body: typeof init?.body === "string" ? init.body : init?.body instanceof URLSearchParams ? init.body.toString() : "" });
    return fetch(input, init);
  };
  const deps: WebDeps = {
    config,
    clock: options.clock,
    ids: createIdGenerator(options.clock, webRandom),
    logger: createWebLogger(config, { sink: (line) => logs.push(JSON.parse(line) as Record<string, unknown>), clock: () => options.clock.now() }),
    fetch: fetchCounted,
    api: options.api,
  };
  return { app: await createWebApp(deps), deps, logs, outbound };
}

/** A browser's cookie store for one origin, enough for these tests: names are unique. */
export class Browser {
  readonly cookies = new Map<string, string>();
  readonly lines: string[] = [];

  constructor(
    private readonly app: WebApp,
    readonly origin: string,
  ) {}

  store(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      this.lines.push(line);
      const [pair = ""] = line.split(";");
      const eq = pair.indexOf("=");
      const name = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      if (value === "" || /max-age=0/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }

  /** A same-origin request (as a page of the web app sends it), cookies included. */
  async request(path: string, init: RequestInit & { site?: string } = {}): Promise<Response> {
    const { site, ...rest } = init;
    const headers = new Headers(rest.headers);
    if (this.cookies.size > 0 && !headers.has("cookie")) headers.set("cookie", this.header());
    if ((rest.method ?? "GET") !== "GET" && !headers.has("origin") && site !== "none") headers.set("origin", this.origin);
    if (site && site !== "none") headers.set("sec-fetch-site", site);
    const res = await this.app.request(new URL(path, this.origin).href, { ...rest, headers, redirect: "manual" });
    this.store(res);
    return res;
  }
}
