import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config";
import type { AppDeps } from "../../src/deps";
import { systemClock } from "../../src/platform/clock";
import { createIdGenerator, webRandom } from "../../src/platform/ids";
import { createJsonLogger } from "../../src/platform/logger";
import { proxyVoice } from "../../src/services/voice/proxy";

// The voice proxy inside workerd: a streamed request body (duplex "half"), the signed identity
// (jose HS256 on Web Crypto) and a streamed answer all have to work on the Workers runtime too.
describe("the voice proxy in workerd", () => {
  it("streams a body to the runtime and its answer back, with a verified identity", async () => {
    const config = parseConfig({ NODE_ENV: "test", VOICE_RUNTIME_URL: String(env.VOICE_RUNTIME_URL), VOICE_RUNTIME_SECRET: String(env.VOICE_RUNTIME_SECRET), VOICE_TIMEOUT_MS: "5000" });
    const deps = {
      config,
      clock: systemClock,
      ids: createIdGenerator(systemClock, webRandom),
      fetch: globalThis.fetch.bind(globalThis),
      logger: createJsonLogger({ level: "silent", sink: () => {} }),
    } as unknown as AppDeps;
    const chunk = new Uint8Array(64 * 1024).fill(7);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === 8) return controller.close();
        sent += 1;
        controller.enqueue(chunk);
      },
    });
    const answer = await proxyVoice(deps, { userId: "usr_workerd", email: null, role: "user", credential: "token" }, {
      target: "agent",
      search: "",
      headers: new Headers({ "content-type": "audio/wav" }),
      body,
      requestId: "req_workerd_voice",
    });
    expect(answer.status).toBe(200);
    expect(answer.headers["content-type"]).toBe("audio/wav");
    const echoed = new Uint8Array(await new Response(answer.body).arrayBuffer());
    expect(echoed.byteLength).toBe(8 * 64 * 1024);
    expect(echoed.every((b) => b === 7)).toBe(true);
    await answer.done;
  });
});
