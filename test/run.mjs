// `npm test`: the node and workers projects in one vitest run, then the workers-cancel project in a
// run of its own (its global setup builds on the workers project's, whose modules cannot be
// evaluated twice in one vitest process). Arguments go to both runs; a JSON report requested with
// --outputFile.json=<file> holds the totals of both.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";

const args = process.argv.slice(2);
const jsonArg = args.find((a) => a.startsWith("--outputFile.json="));
const jsonFile = jsonArg ? resolve(jsonArg.slice("--outputFile.json=".length)) : undefined;
const cancelJson = jsonFile ? `${jsonFile}.cancel` : undefined;

const run = (extra, outputFile) => {
  const forwarded = args.map((a) => (a === jsonArg && outputFile ? `--outputFile.json=${outputFile}` : a));
  return spawnSync("npx", ["vitest", "run", ...extra, ...forwarded], { stdio: "inherit" }).status ?? 1;
};

const main = run([], jsonFile);
const cancel = run(["--root", "test/workers-cancel"], cancelJson);

if (jsonFile && cancelJson && existsSync(cancelJson)) {
  const totals = existsSync(jsonFile) ? JSON.parse(readFileSync(jsonFile, "utf8")) : { numPassedTests: 0, numFailedTests: 0, numPendingTests: 0, numTodoTests: 0 };
  const more = JSON.parse(readFileSync(cancelJson, "utf8"));
  for (const key of ["numPassedTests", "numFailedTests", "numPendingTests", "numTodoTests", "numTotalTests"]) totals[key] = (totals[key] ?? 0) + (more[key] ?? 0);
  writeFileSync(jsonFile, JSON.stringify(totals));
  rmSync(cancelJson);
}
process.exit(main || cancel);
