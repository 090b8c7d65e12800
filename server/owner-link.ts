import path from "node:path";
import { loadOrCreateAuthSecret } from "./auth-secret.ts";
import { parseConfig } from "./config.ts";
import { SqliteAskStore } from "./store/sqlite.ts";
import { secretKey } from "./tabs/auth.ts";
import { describeOwnerLink, mintOwnerLink, revokeOwnerLinks } from "./tabs/owner-links.ts";

/**
 * `npm run owner-link`: prints a new dashboard link for the first owner, valid OWNER_LINK_HOURS.
 * `npm run owner-link -- --revoke` first revokes every owner link minted so far (a running server
 * refuses them from its next connect on), then prints a new one. Same environment as `npm start`.
 */

const USAGE = "usage: npm run owner-link [-- --revoke]";

async function main(args: readonly string[]): Promise<void> {
  const revoke = args.includes("--revoke");
  const unknown = args.filter((arg) => arg !== "--revoke");
  if (unknown.length > 0) throw new Error(`unknown argument ${unknown[0]}: ${USAGE}`);
  const config = parseConfig(process.env);
  const authSecret = loadOrCreateAuthSecret(config);
  const store = new SqliteAskStore(path.join(config.DATA_DIR, "asks.sqlite"));
  try {
    if (revoke) {
      revokeOwnerLinks(store);
      console.log("Every earlier owner link is revoked.");
    }
    const owner = [...config.owners][0] ?? "owner";
    const link = await mintOwnerLink({ store, key: secretKey(authSecret), owner, hours: config.OWNER_LINK_HOURS, baseUrl: config.PUBLIC_URL ?? `http://${config.HOST}:${config.PORT}` });
    console.log(describeOwnerLink(link));
  } finally {
    store.close();
  }
}

try {
  await main(process.argv.slice(2));
} catch (error) {
  console.error(`owner-link: ${(error instanceof Error ? error.message : String(error)).replace(/\s*\n\s*/g, " ")}`);
  process.exit(1);
}
