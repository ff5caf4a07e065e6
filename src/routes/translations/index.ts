import { createRouter } from "../../http/router";
import { bundleRoutes } from "./bundles";
import { jobRoutes } from "./jobs";

export const translationRoutes = createRouter().route("/", bundleRoutes).route("/", jobRoutes);
