import type { Config } from "../../config";
import type { Clock } from "../../platform/clock";
import type { Logger } from "../../platform/logger";
import { createInferenceClient, DEFAULT_MODEL } from "./client";
import type { InferenceClient } from "./types";

/** The client every entry gets: INFERENCE_URL / _API / _MODEL / _API_KEY / _TIMEOUT_MS / _COOLDOWN_MS. */
export function inferenceFromConfig(config: Config, deps: { fetch: typeof fetch; clock: Clock; logger?: Logger }): InferenceClient {
  return createInferenceClient({
    api: config.INFERENCE_API,
    hosts: config.INFERENCE_URL ?? [],
    model: config.INFERENCE_MODEL ?? DEFAULT_MODEL,
    embedModel: config.INFERENCE_EMBED_MODEL,
    apiKey: config.INFERENCE_API_KEY,
    timeoutMs: config.INFERENCE_TIMEOUT_MS,
    cooldownMs: config.INFERENCE_COOLDOWN_MS,
    fetch: deps.fetch,
    clock: deps.clock,
    logger: deps.logger,
  });
}
