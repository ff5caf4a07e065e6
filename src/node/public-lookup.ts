import { lookup as systemLookup, type LookupAddress } from "node:dns";
import type { LookupFunction } from "node:net";
import { isPublicAddress } from "../services/kb/addresses";
import { comparableHostName } from "../services/kb/url-fetch";

/** Every address of a name, as `dns.lookup(name, {all: true})` answers. */
export type LookupAll = (hostname: string, callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) => void;

const lookupAll: LookupAll = (hostname, callback) => systemLookup(hostname, { all: true, verbatim: true }, callback);

/**
 * The resolver a socket for an admin-supplied URL connects through. The URL's host was checked
 * before the request (assertPublicUrl), but a name can answer a public address to that check
 * and a private one when the socket resolves it again (DNS rebinding). Here the addresses the
 * socket is about to use are the ones checked: unless every one is public, the connection fails.
 * `allowedHosts` mirrors assertPublicUrl's test-only exception.
 */
export function publicOnlyLookup(options: { allowedHosts?: readonly string[]; resolve?: LookupAll } = {}): LookupFunction {
  const resolve = options.resolve ?? lookupAll;
  return (hostname, lookupOptions, callback) => {
    resolve(hostname, (err, found) => {
      if (err) return callback(err, "", 0);
      const allowed = options.allowedHosts?.includes(comparableHostName(hostname)) ?? false;
      if (!allowed && (found.length === 0 || !found.every((a) => isPublicAddress(a.address)))) {
        const refused: NodeJS.ErrnoException = new Error(`${hostname} resolves to a private or reserved address`);
        refused.code = "ENOTPUBLIC";
        return callback(refused, "", 0);
      }
      const usable = lookupOptions.family ? found.filter((a) => a.family === lookupOptions.family) : found;
      if (lookupOptions.all) return callback(null, usable);
      const first = usable[0];
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address of family ${lookupOptions.family}`), { code: "ENOTFOUND" }), "", 0);
      callback(null, first.address, first.family);
    });
  };
}
