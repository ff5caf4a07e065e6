import { createServer } from "node:http";
import { createServer as createTcpServer, connect, type Socket } from "node:net";
import type { TestProject } from "vitest/node";
import { startFakeInference } from "../support/fake-inference";
import setup from "../workers/global-setup";

/**
 * The workerd project's services, with slow parts in front so that a request can be cancelled in
 * the middle of a load: an identity provider whose discovery answers after 1.5 s, a hop in front
 * of the Neon WebSocket proxy that delays every chunk by 80 ms, and an inference host that answers
 * after 2 s.
 */
export default async function slowSetup(project: TestProject) {
  const teardown = await setup(project);
  const issuer = project.getProvidedContext().issuerUrl.replace(/\/+$/, "");
  const server = createServer((req, res) => {
    void (async () => {
      // A slow issuer is the point: discovery must still be loading when its first request is cancelled.
      if ((req.url ?? "").includes("openid-configuration")) await new Promise((r) => setTimeout(r, 1_500));
      const up = await fetch(issuer + (req.url ?? "/"));
      res.writeHead(up.status, { "content-type": up.headers.get("content-type") ?? "application/json" });
      res.end(Buffer.from(await up.arrayBuffer()));
    })().catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));

  const sockets = new Set<Socket>();
  const hop = createTcpServer((client) => {
    const upstream = connect(project.getProvidedContext().neonWsProxyPort, "127.0.0.1");
    sockets.add(client).add(upstream);
    const delayed = (from: Socket, to: Socket) => {
      let chain = Promise.resolve();
      from.on("data", (chunk) => {
        chain = chain.then(() => new Promise((r) => setTimeout(r, 80))).then(() => void (to.destroyed || to.write(chunk)));
      });
      from.on("end", () => void chain.then(() => to.end()));
      from.on("error", () => to.destroy());
      from.on("close", () => void chain.then(() => to.destroy()));
    };
    delayed(client, upstream);
    delayed(upstream, client);
  });
  await new Promise<void>((resolve) => hop.listen(0, "127.0.0.1", resolve));

  const inference = await startFakeInference({ model: "slow:1b", mode: "slow", delayMs: 2_000 });
  project.provide("slowIssuerUrl", `http://127.0.0.1:${(server.address() as { port: number }).port}`);
  project.provide("slowWsProxyPort", (hop.address() as { port: number }).port);
  project.provide("slowInferenceUrl", inference.url);
  return async () => {
    await inference.close();
    for (const s of sockets) s.destroy();
    hop.close();
    server.closeAllConnections();
    server.close();
    await teardown();
  };
}
