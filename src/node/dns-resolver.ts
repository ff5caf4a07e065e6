import { lookup } from "node:dns/promises";
import type { HostResolver } from "../services/kb/url-fetch";

/** The system resolver (getaddrinfo), the same one Node's fetch connects through. */
export const systemResolver: HostResolver = {
  async resolve(hostname) {
    const found = await lookup(hostname, { all: true, verbatim: true });
    return found.map((a) => a.address);
  },
};
