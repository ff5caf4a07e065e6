import { ConfigError, parseConfig } from "../config";
import { DevIssuerRefused, signDevToken } from "./dev-issuer";

/** `npm run token -- <userId> [--admin]`: prints a bearer token of the development issuer. */
const args = process.argv.slice(2);
const admin = args.includes("--admin");
const userId = args.find((a) => !a.startsWith("--"));
if (!userId || !/^[A-Za-z0-9._@:-]{1,200}$/.test(userId)) {
  console.error("usage: npm run token -- <userId> [--admin]");
  process.exit(2);
}
try {
  console.log(await signDevToken(parseConfig(process.env), { userId, admin }));
} catch (err) {
  if (err instanceof ConfigError || err instanceof DevIssuerRefused) {
    console.error(`cannot issue a development token: ${err.message}`);
    process.exit(1);
  }
  throw err;
}
