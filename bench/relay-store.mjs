// The calibrated floor of the AI bench: the bare relay (bare-relay.mjs) plus what our chat call does
// besides relaying, in shape only: one Redis round trip before the host is called and one after
// it answers (the rate check with the context read, the context write), and BUSY_US microseconds
// of CPU at each of the four points where our call runs code (arrival, the first reply from Redis,
// the host's answer, the second reply). It answers how much CPU per call a layer with our hops can
// spend on this machine before its added latency passes a given figure.
import { Agent, createServer, request } from "node:http";
import { Redis } from "ioredis";

const port = Number(process.env.PORT);
const target = new URL(process.env.RELAY_TARGET ?? "");
const busyUs = Number(process.env.BUSY_US ?? 0);
const key = `${process.env.KV_PREFIX ?? "bench:relay-store:"}n`;
const agent = new Agent({ keepAlive: true, maxSockets: 256 });
const redis = new Redis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");

function spend() {
  const end = performance.now() + busyUs / 1000;
  while (performance.now() < end);
}

/** One store round trip with the CPU our call spends before it and after its reply. */
async function storeHop() {
  spend();
  await redis.incr(key);
  spend();
}

createServer((req, res) => {
  const body = [];
  req.on("data", (chunk) => body.push(chunk));
  req.on("end", async () => {
    await storeHop();
    const out = request(target, { method: "POST", agent, headers: { "content-type": "application/json" } }, (answer) => {
      const parts = [];
      answer.on("data", (chunk) => parts.push(chunk));
      answer.on("end", async () => {
        await storeHop();
        const bytes = Buffer.concat(parts);
        res.writeHead(answer.statusCode ?? 502, { "content-type": "application/json", "content-length": bytes.length });
        res.end(bytes);
      });
    });
    out.on("error", () => res.writeHead(502).end());
    out.end(Buffer.concat(body));
  });
}).listen(port, "127.0.0.1");

process.on("SIGTERM", () => {
  redis.disconnect();
  process.exit(0);
});
