import { errorMessage } from "../lib/error-message.ts";
import { filterSecret } from "./auth/keys.ts";
import { loadOrCreateAuthSecret } from "./auth/secret.ts";
import { parseConfig } from "./config.ts";

/**
 * `npm run filter-secret`: prints the value for the Open WebUI filter's `auth_secret` valve, for an
 * admin who sets the valves by hand (`npm run connect-openwebui` sets it itself). It is derived from
 * AUTH_SECRET and signs only widget tokens and the filter's requests, never an owner link, so
 * AUTH_SECRET itself never goes into Open WebUI. Same environment as `npm start`.
 */
try {
  if (process.argv.length > 2) throw new Error("usage: npm run filter-secret (no arguments)");
  console.log(filterSecret(loadOrCreateAuthSecret(parseConfig(process.env))));
} catch (error) {
  console.error(`filter-secret: ${errorMessage(error)}`);
  process.exitCode = 1;
}
