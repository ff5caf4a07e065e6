import { MAX_ASSET_BYTES } from "../../services/kb/assets";

/** Asset uploads are the one place that takes multipart bodies, and up to 10 MiB of them. */
export const KB_FORM_PATHS = ["/api/v1/kb/assets"] as const;
/**
 * The request may exceed the file by its multipart framing (boundaries, part headers, the other
 * fields): a file of exactly 10 MiB is accepted, and the service holds the file itself to 10 MiB.
 */
export const KB_FORM_FRAMING_BYTES = 64 * 1024;
export const KB_BODY_LIMITS = [{ prefix: "/api/v1/kb/assets", maxBytes: MAX_ASSET_BYTES + KB_FORM_FRAMING_BYTES }] as const;
