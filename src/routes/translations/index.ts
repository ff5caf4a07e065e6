import { createRouter } from "../../http/router";
import { bundleRoutes } from "./bundles";
import { jobRoutes } from "./jobs";
import { memberTextRoutes } from "./member-text";

// Member text first: its fixed paths are not namespaces.
export const translationRoutes = createRouter().route("/", memberTextRoutes).route("/", bundleRoutes).route("/", jobRoutes);
