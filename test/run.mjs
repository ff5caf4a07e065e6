// `npm test`: the node and workers projects in one vitest run, then the workers-cancel and
// workers-web projects, each in a run of its own (their global setups build on the workers
// project's, whose modules cannot be evaluated twice in one vitest process). Arguments go to every
// run; a JSON report requested with --outputFile.json=<file> holds the totals of all of them.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";

const args = process.argv.slice(2);
const jsonArg = args.find((a) => a.startsWith("--outputFile.json="));
const jsonFile = jsonArg ? resolve(jsonArg.slice("--outputFile.json=".length)) : undefined;
const ISOLATED = ["workers-cancel", "workers-web"];

const run = (extra, outputFile) => {
  const forwarded = args.map((a) => (a === jsonArg && outputFile ? `--outputFile.json=${outputFile}` : a));
  return spawnSync("npx", ["vitest", "run", ...extra, ...forwarded], { stdio: "inherit" }).status ?? 1;
};

const statuses = [run([], jsonFile)];
for (const project of ISOLATED) {
  const partJson = jsonFile ? `${jsonFile}.${project}` : undefined;
  statuses.push(run(["--root", `test/${project}`], partJson));
  if (jsonFile && partJson && existsSync(partJson)) {
    const totals = existsSync(jsonFile) ? JSON.parse(readFileSync(jsonFile, "utf8")) : { numPassedTests: 0, numFailedTests: 0, numPendingTests: 0, numTodoTests: 0 };
    const more = JSON.parse(readFileSync(partJson, "utf8"));
    for (const key of ["numPassedTests", "numFailedTests", "numPendingTests", "numTodoTests", "numTotalTests"]) totals[key] = (totals[key] ?? 0) + (more[key] ?? 0);
    writeFileSync(jsonFile, JSON.stringify(totals));
    rmSync(partJson);
  }
}
process.exit(statuses.find((s) => s !== 0) ?? 0);
