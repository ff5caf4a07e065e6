/**
 * The inference port, in one import:
 * - `createInferenceClient(options)` → InferenceClient (`generate`, `complete`, `health`);
 *   createApp builds one from config (`inferenceFromConfig`) and puts it on `c.var.runtime.inference`.
 * - `InferenceError` (an ApiError: 503 service_unavailable, or 500 internal_error for an answer that
 *   stayed invalid; `reason` says which, "aborted" when the caller went away).
 * - `createFence`, `echoesPrompt`: delimited data blocks for user text and the output check.
 */
export * from "./types";
export { createInferenceClient, jsonSchemaOf, DEFAULT_MODEL, type InferenceClientOptions } from "./client";
export { createFence, echoesPrompt, stringsOf, type PromptFence } from "./prompt";
export { inferenceFromConfig } from "./from-config";
