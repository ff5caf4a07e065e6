// Types `exports.default` from "cloudflare:workers" as the web Worker's own default export.
declare namespace Cloudflare {
  interface GlobalProps {
    mainModule: typeof import("../../workers/web");
  }
  interface Env {
    [binding: string]: unknown;
  }
}
