import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";

export const SOURCE_LOCALES_FOLDER = fileURLToPath(new URL("../../locales/en", import.meta.url));

/** The English source bundles of the repository, by namespace (the file name). */
export function readSourceBundles(folder = SOURCE_LOCALES_FOLDER): Record<string, unknown> {
  const bundles: Record<string, unknown> = {};
  for (const file of readdirSync(folder).filter((f) => f.endsWith(".json")).sort()) {
    const namespace = file.slice(0, -".json".length);
    try {
      bundles[namespace] = JSON.parse(readFileSync(join(folder, file), "utf8")) as unknown;
    } catch (err) {
      throw new Error(`locales/en/${file}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return bundles;
}
