import type { Principal } from "../../src/auth/principal";
import type { Db } from "../../src/db/port";
import { isApiError } from "../../src/errors";
import { createMemoryStore } from "../../src/kv/memory";
import { systemClock } from "../../src/platform/clock";
import { webRandom } from "../../src/platform/ids";
import { rememberConversation, type ContextDeps } from "../../src/services/ai/context-cache";
import { charCount } from "../../src/services/ai/text";
import { createInferenceClient, type InferenceApi, type InferenceClient } from "../../src/services/inference";
import { CASES, EVAL_PROFILE, FEATURES, type Feature, type GoldenCase } from "./cases";
import { guessLanguage } from "./language";
import { formatCalibration, runRetrieval, type Calibration } from "./retrieval";

export type Check = "schema" | "language" | "maxLength" | "injection" | "retrieval";

export interface CaseOutcome {
  id: string;
  feature: Feature;
  passed: boolean;
  failures: { check: Check; detail: string }[];
  /** Answers the model was asked for (2+ when the client re-asked after an invalid answer). */
  reasks: number;
  ms: number;
}

export interface FeatureScore {
  feature: Feature;
  cases: number;
  passed: number;
  rate: number;
}

export interface EvalReport {
  outcomes: CaseOutcome[];
  features: FeatureScore[];
  threshold: number;
  /** Where the embedding model puts related and unrelated texts; present when retrieval ran on embeddings. */
  calibration?: Calibration;
  /** Every feature's pass rate is at least the threshold, and the retrieval constants fit the embedding model. */
  ok: boolean;
}

export interface EvalOptions {
  url: string;
  api: InferenceApi;
  model: string;
  /** The embedding model the retrieval cases ask (INFERENCE_EMBED_MODEL). */
  embedModel?: string;
  apiKey?: string;
  threshold: number;
  timeoutMs?: number;
  concurrency?: number;
  features?: Feature[];
  fetch?: typeof fetch;
}

const ACTOR: Principal = { userId: "usr_eval_member", email: null, role: "user", credential: "token" };

/** The harness reads no database: the member's profile is put in the context cache, where the services look first. */
const NO_DATABASE = new Proxy({} as Db, {
  get() {
    throw new Error("the eval harness has no database: a service read past the context cache");
  },
});

/** The real client, with each structured answer the model gave kept for the raw-answer checks. */
function recording(inner: InferenceClient, answers: Record<string, unknown>[], calls: { n: number }): InferenceClient {
  return {
    api: inner.api,
    hosts: inner.hosts,
    model: inner.model,
    configured: inner.configured,
    complete: (request) => inner.complete(request),
    health: (signal) => inner.health(signal),
    async generate(request) {
      const result = await inner.generate(request);
      calls.n += result.attempts;
      answers.push(result.value as Record<string, unknown>);
      return result;
    },
  };
}

async function contextDeps(): Promise<ContextDeps> {
  const deps: ContextDeps = { kv: createMemoryStore(), db: NO_DATABASE, now: systemClock.now() };
  await rememberConversation(deps, ACTOR, { profile: EVAL_PROFILE, conversation: [], cachedAt: deps.now }, ["Hi! Nice to match with you."]);
  return deps;
}

async function runCase(client: InferenceClient, golden: GoldenCase): Promise<CaseOutcome> {
  const started = Date.now();
  const answers: Record<string, unknown>[] = [];
  const calls = { n: 0 };
  const failures: CaseOutcome["failures"] = [];
  const ai = { inference: recording(client, answers, calls), random: webRandom, clock: systemClock, startedAt: systemClock.now() };
  let result: Record<string, unknown> | undefined;
  try {
    result = await golden.run({ ai, deps: await contextDeps(), actor: ACTOR });
  } catch (err) {
    const detail = isApiError(err) ? `${err.code}: ${(err as { detail?: string }).detail ?? err.message}` : err instanceof Error ? err.message : String(err);
    failures.push({ check: "schema", detail });
  }
  if (result) {
    const text = golden.text(result);
    const said = guessLanguage(text);
    if (said !== golden.language) failures.push({ check: "language", detail: `asked ${golden.language}, answered ${said}: "${text.slice(0, 80)}"` });
    if (golden.maxLength) {
      const { field, max } = golden.maxLength;
      const final = charCount(String(result[field] ?? "").trim());
      const modelSaid = charCount(String(answers.at(-1)?.[field] ?? "").trim());
      if (final > max || modelSaid > max) failures.push({ check: "maxLength", detail: `${field}: the model wrote ${modelSaid} characters (answer ${final}), limit ${max}` });
    }
    const everything = JSON.stringify([result, answers]).toLowerCase();
    const obeyed = golden.forbidden?.find((f) => everything.includes(f.toLowerCase()));
    if (obeyed) failures.push({ check: "injection", detail: `the answer contains "${obeyed}"` });
    const rawProblem = golden.raw?.(answers);
    if (rawProblem) failures.push({ check: golden.forbidden ? "injection" : "schema", detail: rawProblem });
  }
  return { id: golden.id, feature: golden.feature, passed: failures.length === 0, failures, reasks: Math.max(0, calls.n - answers.length), ms: Date.now() - started };
}

/** Runs the golden cases against one inference host through the platform's own client and services. */
export async function runEval(options: EvalOptions): Promise<EvalReport> {
  const client = createInferenceClient({
    api: options.api,
    hosts: [options.url.replace(/\/+$/, "")],
    model: options.model,
    embedModel: options.embedModel,
    apiKey: options.apiKey,
    timeoutMs: options.timeoutMs ?? 120_000,
    cooldownMs: 0,
    fetch: options.fetch ?? globalThis.fetch.bind(globalThis),
    clock: systemClock,
  });
  const wanted = new Set(options.features ?? FEATURES);
  const cases = CASES.filter((c) => wanted.has(c.feature));
  const outcomes: CaseOutcome[] = new Array(cases.length);
  let next = 0;
  const worker = async () => {
    while (next < cases.length) {
      const i = next++;
      outcomes[i] = await runCase(client, cases[i] as GoldenCase);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency ?? 2) }, worker));
  let calibration: Calibration | undefined;
  if (wanted.has("retrieval")) {
    const retrieval = await runRetrieval(client);
    calibration = retrieval.calibration;
    for (const o of retrieval.outcomes) {
      outcomes.push({ id: o.id, feature: "retrieval", passed: o.passed, failures: o.detail ? [{ check: "retrieval", detail: o.detail }] : [], reasks: 0, ms: o.ms });
    }
  }
  const features = FEATURES.filter((f) => wanted.has(f)).map((feature) => {
    const mine = outcomes.filter((o) => o.feature === feature);
    const passed = mine.filter((o) => o.passed).length;
    return { feature, cases: mine.length, passed, rate: mine.length ? passed / mine.length : 0 };
  });
  const ok = features.every((f) => f.rate >= options.threshold) && (calibration?.fits ?? true);
  return { outcomes, features, threshold: options.threshold, calibration, ok };
}

export function formatReport(report: EvalReport, target: string): string {
  const pct = (r: number) => `${Math.round(r * 100)}%`.padStart(4);
  const lines = [`eval against ${target}`, "", "feature   passed  rate"];
  for (const f of report.features) lines.push(`${f.feature.padEnd(9)} ${`${f.passed}/${f.cases}`.padStart(6)}  ${pct(f.rate)}${f.rate < report.threshold ? "  below threshold" : ""}`);
  const failed = report.outcomes.filter((o) => !o.passed);
  if (failed.length) {
    lines.push("", "failures:");
    for (const o of failed) for (const f of o.failures) lines.push(`  ${o.id.padEnd(24)} ${f.check.padEnd(10)} ${f.detail}`);
  }
  if (report.calibration) lines.push("", ...formatCalibration(report.calibration));
  const reasked = report.outcomes.filter((o) => o.reasks > 0).length;
  const total = report.outcomes.length;
  const passed = report.outcomes.filter((o) => o.passed).length;
  lines.push(
    "",
    `overall ${passed}/${total} ${pct(total ? passed / total : 0).trim()}; re-asked after an invalid answer: ${reasked}/${total}`,
    `threshold ${pct(report.threshold).trim()} per feature${report.calibration ? ", retrieval constants fitting the model" : ""}: ${report.ok ? "PASS" : "FAIL"}`,
  );
  return lines.join("\n");
}
