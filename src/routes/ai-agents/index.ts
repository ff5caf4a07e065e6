import { createRouter } from "../../http/router";
import { aiHealthRoutes } from "./health";
import { supportVideoRoutes } from "./support-video";

/** Every route under /api/v1/ai-agents (served on the base host and on AGENTS_HOST). */
export const aiAgentRoutes = createRouter().route("/", aiHealthRoutes).route("/", supportVideoRoutes);
