// The floor of the AI bench: plain node:http relaying each call to the inference host and its answer
// back, with nothing of ours in between (no auth, store, prompt or validation). What it adds over the
// host alone is what the machine itself adds for one more process on the path.
import { Agent, createServer, request } from "node:http";

const port = Number(process.env.PORT);
const target = new URL(process.env.RELAY_TARGET ?? "");
const agent = new Agent({ keepAlive: true, maxSockets: 256 });

createServer((req, res) => {
  const body = [];
  req.on("data", (chunk) => body.push(chunk));
  req.on("end", () => {
    const out = request(target, { method: "POST", agent, headers: { "content-type": "application/json" } }, (answer) => {
      const parts = [];
      answer.on("data", (chunk) => parts.push(chunk));
      answer.on("end", () => {
        const bytes = Buffer.concat(parts);
        res.writeHead(answer.statusCode ?? 502, { "content-type": "application/json", "content-length": bytes.length });
        res.end(bytes);
      });
    });
    out.on("error", () => {
      res.writeHead(502).end();
    });
    out.end(Buffer.concat(body));
  });
}).listen(port, "127.0.0.1");
