import { createRouter } from "../../http/router";
import { bioRoutes } from "./bio";
import { chatRoutes } from "./chat";
import { contextRoutes } from "./context";
import { aiHealthRoutes } from "./health";
import { supportRoutes } from "./support";
import { matchRoutes } from "./match";
import { pricingRoutes } from "./pricing";
import { supportVideoRoutes } from "./support-video";

/** Every route under /api/v1/ai-agents (served on the base host and on AGENTS_HOST). */
export const aiAgentRoutes = createRouter()
  .route("/", aiHealthRoutes)
  .route("/", chatRoutes)
  .route("/", bioRoutes)
  .route("/", matchRoutes)
  .route("/", pricingRoutes)
  .route("/", contextRoutes)
  .route("/", supportRoutes)
  .route("/", supportVideoRoutes);
