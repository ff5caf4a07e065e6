import { exports } from "cloudflare:workers";
import { describe, it } from "vitest";
import { checkReferencePage } from "../support/reference-page";

// The Worker imports the reference page's script as text (wrangler.toml [[rules]]); this proves
// the Worker serves it from its own origin.
const worker = exports.default;

describe("the API reference page in workerd", () => {
  it("serves /docs and its script from the Worker's own origin, with a CSP nonce", async () => {
    await checkReferencePage((path) => worker.fetch(`http://api.test${path}`));
    // The first request loads the Worker's modules, the 3.5 MB script among them.
  }, 60_000);
});
