import { z } from "@hono/zod-openapi";
import { principalOf } from "../../http/auth";
import { createRouter } from "../../http/router";
import { protectedRoute } from "../../http/routes";
import { VOICE_TARGETS, proxyVoice, type VoiceTarget } from "../../services/voice/proxy";

export const VOICE_PREFIX = "/api/v1/voice/";

const SUMMARY: Record<VoiceTarget, string> = {
  agent: "One turn with the voice agent (proxied to the voice runtime)",
  stt: "Speech to text (proxied to the voice runtime)",
  tts: "Text to speech (proxied to the voice runtime)",
};

// Declared as binary only: a JSON or form media type here would make the validator read the body,
// and these bodies must stream through untouched.
const Binary = z.string().openapi({ format: "binary" });
const passedThrough = { "application/octet-stream": { schema: Binary }, "audio/*": { schema: Binary } };

function voiceRoute(target: VoiceTarget) {
  return protectedRoute("ai", {
    method: "post",
    path: `${VOICE_PREFIX}${target}`,
    tags: ["voice"],
    summary: SUMMARY[target],
    description:
      "The body (any content type, streamed) and the query string go to the voice runtime as they are, with a signed identity of the caller; the runtime's answer streams back with its status, Content-Type and Content-Length.",
    request: { body: { required: false, description: "Passed through to the voice runtime", content: passedThrough } },
    responses: {
      200: { description: "The voice runtime's answer, streamed", content: passedThrough },
      413: { description: "Body over VOICE_MAX_BODY_BYTES (checked up front and while streaming)" },
      503: { description: "The voice runtime is not configured, unreachable, too slow or failing" },
    },
  });
}

export const voiceRoutes = createRouter();
for (const target of VOICE_TARGETS) {
  voiceRoutes.openapi(voiceRoute(target), async (c) => {
    const raw = c.req.raw;
    const answer = await proxyVoice(c.var.deps, principalOf(c), {
      target,
      search: new URL(raw.url).search,
      headers: raw.headers,
      body: raw.body,
      requestId: c.var.requestId,
      signal: raw.signal,
    });
    c.set("responseDone", answer.done);
    // c.body keeps the headers set before the handler (rate-limit counts); a bare Response would drop them.
    const status = answer.status as 200;
    return answer.body ? c.body(answer.body, status, answer.headers) : c.body(null, status, answer.headers);
  });
}
