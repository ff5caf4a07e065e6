import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

// Modules that only exist on Node (or only make sense there). esbuild inlines whatever it can
// resolve, so a leak shows up either as a remaining import or as an inlined module's marker.
const NODE_ONLY = ["pg", "pg-native", "ioredis", "@electric-sql/pglite", "@hono/node-server", "ws", "tsx"];
const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|\bimport\s+)["']([^"']+)["']/g;

let work: string;
let run: { code: number | null; stdout: string; stderr: string };
let bundle = "";

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "worker-bundle-"));
  run = await new Promise((resolve) => {
    execFile(
      "npx",
      ["--no-install", "wrangler", "deploy", "--dry-run", "--outdir", join(work, "out")],
      {
        cwd: ROOT,
        timeout: 60_000,
        env: {
          ...process.env,
          WRANGLER_SEND_METRICS: "false",
          CLOUDFLARE_CF_FETCH_ENABLED: "false",
          XDG_CONFIG_HOME: join(work, "config"),
          // A dry run needs no account; never let a developer's token make it talk to the API.
          CLOUDFLARE_API_TOKEN: "",
          NO_COLOR: "1",
        },
      },
      (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout, stderr }),
    );
  });
  const file = join(work, "out", "api.js");
  if (existsSync(file)) bundle = readFileSync(file, "utf8");
}, 90_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe("the Worker bundle (wrangler deploy --dry-run)", () => {
  it("builds offline with exit code 0", () => {
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(existsSync(join(work, "out", "api.js"))).toBe(true);
    expect(bundle.length).toBeGreaterThan(1000);
  });

  it("imports no Node-only module", () => {
    const imports = [...bundle.matchAll(IMPORT)].map((m) => m[1] as string);
    const leaked = imports.filter((spec) => spec.startsWith("node:") || NODE_ONLY.some((m) => spec === m || spec.startsWith(`${m}/`)));
    expect(leaked).toEqual([]);
  });

  it("inlines no Node-only package and none of the Node entry code", () => {
    const markers = [...bundle.matchAll(/^\/\/ (\S+)$/gm)].map((m) => m[1] as string);
    // Sanity check that the markers are there to read: the entry itself is one.
    expect(markers).toContain("workers/api.ts");
    const leaked = markers.filter(
      (path) => path.startsWith("src/node/") || path.includes(".node.") || NODE_ONLY.some((m) => path.startsWith(`node_modules/${m}/`)),
    );
    expect(leaked).toEqual([]);
  });
});
