import { parseArgs } from "node:util";
import { FEATURES, type Feature } from "./cases";
import { formatReport, runEval } from "./harness";

const USAGE = `usage: npm run eval -- --url <host base URL> --api ollama|openai [--model platform-chat] [--embed-model platform-embed]
       [--key <bearer>] [--threshold 0.8] [--feature chat,bio,match,pricing,retrieval] [--concurrency 2] [--timeout-ms 120000] [--json]
The bearer defaults to $INFERENCE_API_KEY. Exit status: 0 every feature at or above the threshold,
1 below it or the retrieval constants do not fit the embedding model, 2 bad usage.`;

function fail(message: string): never {
  console.error(`${message}\n\n${USAGE}`);
  process.exit(2);
}

let values;
try {
  ({ values } = parseArgs({
    options: {
      url: { type: "string" },
      api: { type: "string" },
      model: { type: "string", default: "platform-chat" },
      "embed-model": { type: "string", default: "platform-embed" },
      key: { type: "string" },
      threshold: { type: "string", default: "0.8" },
      feature: { type: "string" },
      concurrency: { type: "string", default: "2" },
      "timeout-ms": { type: "string", default: "120000" },
      json: { type: "boolean", default: false },
      help: { type: "boolean", default: false },
    },
  }));
} catch (err) {
  fail(err instanceof Error ? err.message : String(err));
}
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
if (!values.url || !/^https?:\/\//.test(values.url)) fail("--url must be an http(s) URL");
if (values.api !== "ollama" && values.api !== "openai") fail("--api must be ollama or openai");
const threshold = Number(values.threshold);
if (!(threshold >= 0 && threshold <= 1)) fail("--threshold must be between 0 and 1");
const features = values.feature?.split(",").map((f) => f.trim()) as Feature[] | undefined;
const unknown = features?.find((f) => !FEATURES.includes(f));
if (unknown) fail(`unknown feature '${unknown}'`);

const report = await runEval({
  url: values.url,
  api: values.api,
  model: values.model,
  embedModel: values["embed-model"],
  apiKey: values.key ?? process.env.INFERENCE_API_KEY,
  threshold,
  features,
  concurrency: Math.max(1, Number(values.concurrency) || 1),
  timeoutMs: Number(values["timeout-ms"]) || 120_000,
});
console.log(values.json ? JSON.stringify(report, null, 2) : formatReport(report, `${values.url} (${values.api}, model ${values.model})`));
process.exit(report.ok ? 0 : 1);
