// The baseline: plain node:http answering with the bytes the API sends for the same route.
import { createServer } from "node:http";

const port = Number(process.env.PORT);
const body = process.env.BARE_BODY ?? "{}";
const status = Number(process.env.BARE_STATUS ?? 200);
let n = 0;
createServer((req, res) => {
  // Drain the request so keep-alive connections stay usable, as the API does.
  req.resume();
  res.writeHead(status, { "content-type": "application/json", "x-request-id": `req_${++n}` });
  res.end(body);
}).listen(port, "127.0.0.1");
