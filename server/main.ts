import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import next from "next";
import { startServer } from "./app.ts";
import { ConfigError, parseConfig, type Config } from "./config.ts";
import { mintTabToken, secretKey } from "./tabs/auth.ts";
import { createPagesHandler } from "./http/pages.ts";

/**
 * `npm start`: parse the environment, serve the Next.js app and the tab protocol on one port,
 * and print a dashboard link with a signed owner token (as Jupyter prints its token URL).
 */

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

function loadOrCreateAuthSecret(config: Config): string {
  if (config.AUTH_SECRET) return config.AUTH_SECRET;
  const file = path.join(config.DATA_DIR, "auth-secret");
  if (existsSync(file)) return readFileSync(file, "utf8").trim();
  mkdirSync(config.DATA_DIR, { recursive: true });
  const secret = randomBytes(32).toString("base64url");
  writeFileSync(file, `${secret}\n`, { mode: 0o600 });
  return secret;
}

async function main(): Promise<void> {
  let config: Config;
  try {
    config = parseConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
  const dev = process.env.NODE_ENV === "development";
  const authSecret = loadOrCreateAuthSecret(config);
  const nextApp = next({ dev, dir: projectRoot, hostname: config.HOST, port: config.PORT });
  await nextApp.prepare();
  const handle = nextApp.getRequestHandler();

  // WebSocket upgrades on the one port: Socket.IO answers its own path (/socket.io/) and leaves the
  // rest alone; Next's custom server adds its own upgrade listener to this HTTP server on the first
  // request and answers hot reload (/_next/hmr) there. Its public getUpgradeHandler() does not serve
  // hot reload in a custom server, so the upgrade is not routed by hand.
  const server = await startServer({
    config,
    authSecret,
    pages: createPagesHandler({ handle, frameAncestors: config.OPENWEBUI_ORIGINS, dev, log: (message) => console.error(message) }),
  });

  const owner = [...config.owners][0] ?? "owner";
  const token = await mintTabToken(secretKey(authSecret), { userId: owner, ttlSeconds: 7 * 24 * 3600 });
  const base = config.PUBLIC_URL ?? server.url;
  console.log(`OpenClaw Asks is running on ${server.url}`);
  console.log(`Dashboard (owner "${owner}", valid 7 days): ${base}/?token=${token}`);

  const shutdown = () => {
    console.log("stopping");
    void server.stop().then(() => process.exit(0));
  };
  process.once("SIGINT", shutdown);
  process.once("SIGTERM", shutdown);
}

await main();
