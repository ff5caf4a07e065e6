import { describe, expect, it } from "vitest";
import { buildTestApp } from "../support/app";
import { useTestEnvironment } from "../support/environment";
import { json, newUser } from "../support/users";
import { randomSuffix } from "../support/services";

const SECRET = "observability-secret-0123456789";
const env = useTestEnvironment();

const heartbeat = (vmId: string, body: unknown, token?: string) =>
  json(body, token === undefined ? {} : { "x-observability-token": token });

describe("VM heartbeats", () => {
  it("is closed (503) when no observability token is configured", async () => {
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer });
    const res = await t.request("/api/v1/admin/observability/vms/vm-1/heartbeat", heartbeat("vm-1", {}, SECRET));
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ error: "service_unavailable", code: 503 });
  });

  it("accepts the right token only, and admins read the latest telemetry", async () => {
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer, env: { OBSERVABILITY_TOKEN: SECRET } });
    const vmId = `gpu-${randomSuffix()}`;
    const path = `/api/v1/admin/observability/vms/${vmId}/heartbeat`;
    expect((await t.request(path, heartbeat(vmId, { cpuPercent: 10 }))).status).toBe(401);
    const wrong = await t.request(path, heartbeat(vmId, { cpuPercent: 10 }, `${SECRET}x`));
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toMatchObject({ error: "unauthorized", message: "invalid key" });

    expect((await t.request(path, heartbeat(vmId, { cpuPercent: 10 }, SECRET))).status).toBe(202);
    const ok = await t.request(path, heartbeat(vmId, { cpuPercent: 55.5, hostname: "gpu-host", model: "llama" }, SECRET));
    expect(ok.status).toBe(202);

    const admin = await newUser(env.issuer, { admin: true });
    const list = await t.request("/api/v1/admin/observability/vms", { headers: admin.headers });
    expect(list.status).toBe(200);
    const { vms } = (await list.json()) as { vms: { vmId: string; stale: boolean; telemetry: Record<string, unknown> }[] };
    expect(vms.find((v) => v.vmId === vmId)).toMatchObject({ stale: false, telemetry: { cpuPercent: 55.5, hostname: "gpu-host", model: "llama" } });

    const user = await newUser(env.issuer);
    expect((await t.request("/api/v1/admin/observability/vms", { headers: user.headers })).status).toBe(403);
  });

  it("rejects bad telemetry and bad VM ids with 400", async () => {
    const t = buildTestApp({ database: env.db.database, issuer: env.issuer, env: { OBSERVABILITY_TOKEN: SECRET } });
    const bad = await t.request("/api/v1/admin/observability/vms/vm-1/heartbeat", heartbeat("vm-1", { cpuPercent: 250, nested: { a: 1 } }, SECRET));
    expect(bad.status).toBe(400);
    const body = (await bad.json()) as { details: { path: string }[] };
    expect(body.details.map((d) => d.path).sort()).toEqual(["cpuPercent", "nested"]);
    const badId = await t.request(`/api/v1/admin/observability/vms/${"x".repeat(65)}/heartbeat`, heartbeat("x", {}, SECRET));
    expect(badId.status).toBe(400);
  });
});
