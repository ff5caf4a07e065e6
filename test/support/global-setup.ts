import type { TestProject } from "vitest/node";
import { ensureTemplate } from "./template-db";

declare module "vitest" {
  export interface ProvidedContext {
    templateDatabase: string;
  }
}

export default async function setup(project: TestProject): Promise<void> {
  project.provide("templateDatabase", await ensureTemplate());
}
