import { readFile } from "node:fs/promises";

// Two folders below the repository root, as source (src/node/) and as the built entry
// (dist/node/main.mjs) alike.
const SCRIPT = new URL("../../vendor/scalar-api-reference/standalone.js", import.meta.url);

/**
 * Read on each request rather than kept: it is 3.5 MB, browsers fetch it once (its URL is
 * versioned and cached for good), and the file stays in the OS page cache.
 */
export function readApiReferenceScript(): Promise<string> {
  return readFile(SCRIPT, "utf8");
}
