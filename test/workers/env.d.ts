// Types `exports.default` from "cloudflare:workers" as the Worker's own default export.
declare namespace Cloudflare {
  interface GlobalProps {
    mainModule: typeof import("../../workers/api");
  }
  interface Env {
    [binding: string]: unknown;
  }
}
