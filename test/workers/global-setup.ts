import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { TestProject } from "vitest/node";
import { startNeonWsProxy } from "../support/neon-ws-proxy";
import { startFakeInference } from "../support/fake-inference";
import { startFakeVoiceRuntime } from "../support/fake-voice-runtime";
import { startTestIssuer } from "../support/issuer";
import { startCardAFake } from "../support/providers/card-a";
import { startUpstashRestServer } from "../support/upstash-rest-server";
import { startWebhookReceiver } from "../support/webhook-receiver";
import { databaseUrl, serverAddress, withPgClient } from "../support/pg";
import { TEST_PG_ADMIN_URL, TEST_REDIS_URL, randomSuffix } from "../support/services";

const MIGRATIONS = fileURLToPath(new URL("../../migrations/", import.meta.url));

/** The migration files in the order drizzle-kit recorded them, each split into statements. */
export function migrationStatements(): string[] {
  const journal = JSON.parse(readFileSync(`${MIGRATIONS}meta/_journal.json`, "utf8")) as { entries: { idx: number; tag: string }[] };
  return [...journal.entries]
    .sort((a, b) => a.idx - b.idx)
    .flatMap((entry) => readFileSync(`${MIGRATIONS}${entry.tag}.sql`, "utf8").split("--> statement-breakpoint"))
    .map((statement) => statement.trim())
    .filter((statement) => statement !== "");
}

/**
 * workerd cannot open TCP to Postgres the way Neon's driver expects, so the tests in workerd
 * reach a fresh, migrated database through the same kind of WebSocket proxy Neon runs.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const name = `workers_t_${randomSuffix()}`;
  const url = databaseUrl(name);

  await withPgClient(TEST_PG_ADMIN_URL, (c) => c.query(`create database "${name}"`));
  await withPgClient(url, async (c) => {
    for (const statement of migrationStatements()) await c.query(statement);
  });
  const proxy = await startNeonWsProxy({ allow: [serverAddress()] });

  project.provide("workersDatabaseUrl", url);
  project.provide("neonWsProxyPort", proxy.port);
  const inference = await startFakeInference({ model: "workerd-test:1b" });
  project.provide("inferenceUrl", inference.url);
  const voice = await startFakeVoiceRuntime(`workers-voice-${randomSuffix()}-${randomSuffix()}-${randomSuffix()}`);
  project.provide("voiceRuntimeUrl", voice.url);
  project.provide("voiceRuntimeSecret", voice.secret);
  const issuer = await startTestIssuer();
  project.provide("issuerUrl", issuer.url);
  project.provide("issuerAudience", issuer.audience);
  project.provide("issuerSigningJwk", JSON.stringify(await issuer.privateJwk()));
  const upstashToken = `workers-upstash-${randomSuffix()}${randomSuffix()}`;
  const upstash = await startUpstashRestServer({ redisUrl: TEST_REDIS_URL, token: upstashToken });
  project.provide("upstashUrl", upstash.url);
  project.provide("upstashToken", upstashToken);
  const cardA = await startCardAFake();
  project.provide("cardAEnv", JSON.stringify(cardA.env));
  // A partner's webhook endpoint; the Worker may call it on loopback (WEBHOOK_ALLOWED_HOSTS).
  const receiver = await startWebhookReceiver();
  project.provide("webhookReceiverUrl", receiver.url(""));

  return async () => {
    await inference.close();
    await voice.close();
    await issuer.close();
    await upstash.close();
    await cardA.close();
    await receiver.close();
    await proxy.close();
    await withPgClient(TEST_PG_ADMIN_URL, (c) => c.query(`drop database if exists "${name}" with (force)`));
  };
}
