import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { configSchema } from "../../src/config";
import { webConfigSchema } from "../../src/web/config";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const README_MAX_LINES = 400;
/** Not ours, or not documentation. */
const SKIP_DIRS = new Set(["node_modules", ".git", ".data", ".wrangler", "dist", "coverage"]);

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return SKIP_DIRS.has(entry.name) ? [] : markdownFiles(path);
    return entry.name.endsWith(".md") ? [path] : [];
  });
}

/** The text outside fenced code blocks and inline code, where links and headings live. */
function prose(markdown: string): string {
  return markdown
    .replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "")
    .replace(/`[^`\n]*`/g, "");
}

/** GitHub's heading anchors (github-slugger): lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function headingSlugs(markdown: string): Set<string> {
  const withoutCode = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");
  const seen = new Map<string, number>();
  const slugs = new Set<string>();
  for (const [, heading] of withoutCode.matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const text = (heading ?? "")
      .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
      .replace(/<[^>]+>/g, "")
      .replace(/[`*]/g, "");
    const base = text.toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "").replace(/ /g, "-");
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    slugs.add(count === 0 ? base : `${base}-${count}`);
  }
  return slugs;
}

/** Inline links and reference definitions: `[text](target "title")`, `[label]: target`. */
function linkTargets(markdown: string): string[] {
  const text = prose(markdown);
  const inline = [...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1] as string);
  const references = [...text.matchAll(/^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)].map((m) => m[1] as string);
  return [...inline, ...references];
}

interface Broken {
  file: string;
  target: string;
  reason: string;
}

function brokenLinks(files: string[]): Broken[] {
  const slugCache = new Map<string, Set<string>>();
  const slugsOf = (path: string) => {
    let slugs = slugCache.get(path);
    if (!slugs) slugCache.set(path, (slugs = headingSlugs(readFileSync(path, "utf8"))));
    return slugs;
  };
  const broken: Broken[] = [];
  for (const file of files) {
    for (const target of linkTargets(readFileSync(file, "utf8"))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: and the like
      const [rawPath = "", anchor] = target.split("#", 2);
      const path = rawPath === "" ? file : resolve(dirname(file), decodeURI(rawPath));
      const at = { file: relative(ROOT, file), target };
      if (!existsSync(path)) {
        broken.push({ ...at, reason: "no such file" });
        continue;
      }
      if (anchor === undefined) continue;
      if (statSync(path).isDirectory() || !path.endsWith(".md")) {
        broken.push({ ...at, reason: "an anchor into something that is not a Markdown file" });
      } else if (!slugsOf(path).has(decodeURIComponent(anchor).toLowerCase())) {
        broken.push({ ...at, reason: `no heading with the anchor #${anchor}` });
      }
    }
  }
  return broken;
}

const files = markdownFiles(ROOT);
const readme = readFileSync(join(ROOT, "README.md"), "utf8");

describe("the documentation", () => {
  it("covers the README, bench/README.md and docs/", () => {
    const names = files.map((f) => relative(ROOT, f));
    expect(names).toContain("README.md");
    expect(names).toContain(join("bench", "README.md"));
    expect(names.filter((n) => n.startsWith(`docs${"/"}`)).length).toBeGreaterThan(0);
  });

  it("links only to files and headings that exist", () => {
    expect(brokenLinks(files)).toEqual([]);
  });

  it(`keeps the README within ${README_MAX_LINES} lines`, () => {
    expect(readme.split("\n").length).toBeLessThanOrEqual(README_MAX_LINES);
  });

  it("names every variable src/config.ts and src/web/config.ts read in the README's configuration table", () => {
    const table = readme.split("\n").filter((line) => line.startsWith("| `"));
    const missing = [...Object.keys(configSchema.shape), ...Object.keys(webConfigSchema.shape)].filter((name) => !table.some((row) => row.includes(`\`${name}\``)));
    expect(missing).toEqual([]);
  });
});

describe("the link check itself", () => {
  it("computes GitHub's anchors", () => {
    expect(headingSlugs("# API conventions\n## `GET /health`: liveness\n## Errors\n## Errors\n```\n# not a heading\n```")).toEqual(
      new Set(["api-conventions", "get-health-liveness", "errors", "errors-1"]),
    );
  });

  it("reads links outside code only", () => {
    expect(linkTargets("[a](x.md#y) and `[b](not-a-link.md)`\n\n```\n[c](nor-this.md)\n```\n[d]: ../z.md")).toEqual(["x.md#y", "../z.md"]);
  });

  it("reports a missing file and a missing heading, and passes good links", () => {
    const dir = mkdtempSync(join(tmpdir(), "docs-links-"));
    try {
      writeFileSync(join(dir, "b.md"), "# Present heading\n");
      const a = join(dir, "a.md");
      writeFileSync(a, "[ok](b.md#present-heading) [self](#top) [gone](c.md) [bad](b.md#absent) [web](https://example.com/x)\n# Top\n");
      expect(brokenLinks([a]).map((b) => [b.target, b.reason])).toEqual([
        ["c.md", "no such file"],
        ["b.md#absent", "no heading with the anchor #absent"],
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
