import { MAX_ASSET_BYTES } from "../../services/kb/assets";

/** Asset uploads are the one place that takes multipart bodies, and up to 10 MiB of them. */
export const KB_FORM_PATHS = ["/api/v1/kb/assets"] as const;
export const KB_BODY_LIMITS = [{ prefix: "/api/v1/kb/assets", maxBytes: MAX_ASSET_BYTES }] as const;
