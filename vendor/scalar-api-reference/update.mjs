// Refreshes the vendored browser build of the Scalar API reference from the npm registry:
//   npm run vendor:api-reference -- <version>
// Pick a version whose @scalar/types matches the one @scalar/hono-api-reference uses (same
// release), so the page the middleware writes and the script agree on the configuration.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const PACKAGE = "@scalar/api-reference";
const version = process.argv[2];
if (!version || !/^\d+\.\d+\.\d+$/.test(version)) {
  console.error("usage: npm run vendor:api-reference -- <version, e.g. 1.46.4>");
  process.exit(2);
}

const here = fileURLToPath(new URL(".", import.meta.url));
const work = mkdtempSync(join(tmpdir(), "scalar-api-reference-"));
try {
  const [packed] = JSON.parse(execFileSync("npm", ["pack", `${PACKAGE}@${version}`, "--json", "--pack-destination", work], { encoding: "utf8" }));
  execFileSync("tar", ["-xzf", join(work, packed.filename), "-C", work, "package/dist/browser/standalone.js"]);
  copyFileSync(join(work, "package/dist/browser/standalone.js"), join(here, "standalone.js"));
  const sha256 = createHash("sha256").update(readFileSync(join(here, "standalone.js"))).digest("hex");
  const manifest = { package: PACKAGE, version, file: "standalone.js", tarballIntegrity: packed.integrity, sha256 };
  writeFileSync(join(here, "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  console.log(`vendored ${PACKAGE}@${version} (sha256 ${sha256})`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
