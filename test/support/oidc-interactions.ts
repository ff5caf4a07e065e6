/**
 * The browser's side of an `oidc-provider` sign-in, with Web APIs only (fetch, URL, Headers), so
 * that tests inside workerd drive the same flow as tests on Node (test/support/oidc-provider.ts).
 */

function decodeHtml(value: string): string {
  return value
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&#x27;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&#x2F;|&#47;/g, "/")
    .replace(/&amp;/g, "&");
}

function attribute(tag: string, name: string): string | undefined {
  const match = new RegExp(`\\s${name}="([^"]*)"`, "i").exec(tag);
  return match?.[1] === undefined ? undefined : decodeHtml(match[1]);
}

/** The first form of a page: its action and every input with its value (hidden ones included). */
function parseForm(html: string): { action: string; fields: Map<string, string> } {
  const form = /<form\b[^>]*>[\s\S]*?<\/form>/i.exec(html)?.[0];
  if (!form) throw new Error(`expected a form in the interaction page: ${html.slice(0, 300)}`);
  const action = attribute(/<form\b[^>]*>/i.exec(form)?.[0] ?? "", "action");
  if (!action) throw new Error("the interaction form has no action");
  const fields = new Map<string, string>();
  for (const [tag] of form.matchAll(/<input\b[^>]*>/gi)) {
    const name = attribute(tag, "name");
    if (name) fields.set(name, attribute(tag, "value") ?? "");
  }
  return { action, fields };
}

/** Enough of a cookie jar for one flow against one host: names are unique, paths are ignored. */
export class CookieJar {
  private readonly cookies = new Map<string, string>();

  store(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair = "", ...attrs] = line.split(";");
      const eq = pair.indexOf("=");
      if (eq <= 0) continue;
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attrs.some((a) => {
        const [k = "", v = ""] = a.trim().split("=");
        if (k.toLowerCase() === "max-age") return Number(v) <= 0;
        if (k.toLowerCase() === "expires") return Date.parse(v) <= Date.now();
        return false;
      });
      if (expired || value === "") this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }
}

/**
 * Plays the browser from an authorization URL through an `oidc-provider`'s development login and
 * consent forms (any password passes) and returns the URL it finally sends the browser to: the
 * client's redirect URI with `code` and `state`, or with `error`.
 */
export async function followAuthorization(authorizationUrl: string, accountId: string, redirectUri: string, serverErrors: () => string = () => ""): Promise<URL> {
  const jar = new CookieJar();
  let next: { url: URL; init: RequestInit } = { url: new URL(authorizationUrl), init: { method: "GET" } };
  for (let step = 0; step < 20; step += 1) {
    const res = await fetch(next.url, { ...next.init, redirect: "manual", headers: { ...(next.init.headers as Record<string, string>), cookie: jar.header() } });
    jar.store(res);
    const location = res.headers.get("location");
    if (res.status >= 300 && res.status < 400 && location) {
      await res.body?.cancel();
      const target = new URL(location, next.url);
      if (target.href.startsWith(redirectUri)) return target;
      next = { url: target, init: { method: "GET" } };
      continue;
    }
    const html = await res.text();
    if (res.status !== 200) throw new Error(`interaction answered ${res.status}: ${html.replace(/<style[\s\S]*?<\/style>/, "").slice(0, 1500)} ${serverErrors()}`);
    // A login or consent page: fill in the login and submit.
    const { action, fields } = parseForm(html);
    if (fields.has("login")) fields.set("login", accountId);
    if (fields.has("password")) fields.set("password", "any-password");
    next = {
      url: new URL(action, next.url),
      init: { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams([...fields]).toString() },
    };
  }
  throw new Error("the authorization flow did not reach the redirect URI");
}
