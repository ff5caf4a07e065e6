import { afterAll } from "vitest";
import { cleanupAppStores } from "./redis";

// Registered before the file's own hooks, so it runs after them (after hooks run in reverse order):
// apps are stopped before their stores close.
afterAll(cleanupAppStores);
