import { createRouter } from "../../http/router";
import { bundleRoutes } from "./bundles";

export const translationRoutes = createRouter().route("/", bundleRoutes);
