import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "../..");

function sources(dir: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && /\.tsx?$/.test(entry.name))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)));
}

function importsOf(file: string): string[] {
  const text = readFileSync(join(root, file), "utf8");
  return [...text.matchAll(/(?:^|\n)\s*(?:import|export)[^"';]*?from\s+"([^"]+)"|import\(\s*"([^"]+)"\s*\)/g)].map((m) => m[1] ?? m[2]!);
}

// Layer rules the code review relies on; a break should fail here, not in a reviewer's reading.
describe("layering", () => {
  it("keeps business rules free of the HTTP framework", () => {
    const offenders = sources("src/services").flatMap((file) =>
      importsOf(file).filter((spec) => spec === "hono" || spec.startsWith("hono/") || spec.startsWith("@hono/")).map((spec) => `${file} imports ${spec}`),
    );
    expect(offenders).toEqual([]);
  });

  it("keeps Node-only modules out of the code that also runs on Workers", () => {
    const nodeOnly = /^(node:|ioredis$|pg$|@hono\/node-server|@electric-sql\/pglite)/;
    const offenders = sources("src")
      .filter((file) => !file.startsWith("src/node/") && !/\.node\.tsx?$/.test(file))
      .flatMap((file) => importsOf(file).filter((spec) => nodeOnly.test(spec)).map((spec) => `${file} imports ${spec}`));
    expect(offenders).toEqual([]);
  });

  it("finds the imports it checks", () => {
    expect(importsOf("src/routes/profiles/input-schema.ts")).toContain("@hono/zod-openapi");
  });
});
