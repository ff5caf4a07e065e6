import { expect } from "vitest";

/** Hosts the reference page must not load anything from: CDNs, font hosts, Scalar's services. */
export const THIRD_PARTY_HOSTS = ["cdn.jsdelivr.net", "unpkg.com", "cdnjs.cloudflare.com", "fonts.googleapis.com", "fonts.gstatic.com", "fonts.scalar.com", "scalar.com"];

type Fetcher = (path: string) => Promise<Response>;

/**
 * What a browser gets from /docs: an HTML page whose scripts all come from this origin or carry
 * the CSP nonce, the script itself, and nothing from another host. Shared by the Node and the
 * workerd tests, so both runtimes are held to the same page.
 */
export async function checkReferencePage(get: Fetcher): Promise<void> {
  const page = await get("/docs");
  expect(page.status).toBe(200);
  expect(page.headers.get("content-type")).toMatch(/^text\/html/);
  const html = await page.text();

  const csp = page.headers.get("content-security-policy") ?? "";
  const nonce = /script-src [^;]*'nonce-([A-Za-z0-9+/=_-]+)'/.exec(csp)?.[1];
  expect(nonce, csp).toBeTruthy();
  expect(csp).toContain("default-src 'none'");
  expect(csp).toContain("connect-src 'self'");

  const scripts = [...html.matchAll(/<script\b([^>]*)>/g)].map((m) => m[1] ?? "");
  expect(scripts.length).toBeGreaterThanOrEqual(2);
  for (const attributes of scripts) expect(attributes).toContain(`nonce="${nonce}"`);
  const sources = scripts.map((a) => /\bsrc="([^"]+)"/.exec(a)?.[1]).filter((s): s is string => s !== undefined);
  expect(sources).toHaveLength(1);
  const [src] = sources as [string];
  // Same origin: a path, not a URL naming a host.
  expect(src).toMatch(/^\/[^/]/);
  expect(html).toContain('"url": "/openapi.json"');
  for (const host of THIRD_PARTY_HOSTS) expect(html, host).not.toContain(host);

  const script = await get(src);
  expect(script.status).toBe(200);
  expect(script.headers.get("content-type")).toMatch(/^text\/javascript/);
  expect(script.headers.get("cache-control")).toContain("immutable");
  const text = await script.text();
  expect(text).toContain("@scalar/api-reference");
  expect(text.length).toBeGreaterThan(1_000_000);

  // A second page view gets a new nonce.
  const again = (await get("/docs")).headers.get("content-security-policy") ?? "";
  expect(again).not.toBe(csp);
}
