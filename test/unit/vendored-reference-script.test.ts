import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import manifest from "../../vendor/scalar-api-reference/manifest.json";
import { REFERENCE_SCRIPT_PATH } from "../../src/routes/docs";

describe("the vendored API reference script", () => {
  it("is the file its manifest names, byte for byte", () => {
    const bytes = readFileSync(new URL(`../../vendor/scalar-api-reference/${manifest.file}`, import.meta.url));
    expect(createHash("sha256").update(bytes).digest("hex")).toBe(manifest.sha256);
    expect(bytes.subarray(0, 400).toString("utf8")).toContain(`${manifest.package} ${manifest.version}`);
  });

  it("is served under a path that names its version, so a new version is a new URL", () => {
    expect(REFERENCE_SCRIPT_PATH).toBe(`/docs/assets/scalar-api-reference-${manifest.version}.js`);
  });
});
