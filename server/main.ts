import path from "node:path";
import { fileURLToPath } from "node:url";
import next from "next";
import { systemClock } from "../lib/clock.ts";
import { errorMessage } from "../lib/error-message.ts";
import { createApplication } from "./app.ts";
import { describeOwnerLink, mintOwnerLink } from "./auth/owner-links.ts";
import { loadOrCreateAuthSecret } from "./auth/secret.ts";
import { secretKey } from "./auth/tokens.ts";
import { parseConfig } from "./config.ts";
import { gatewayFromConfig } from "./gateway/gateway.ts";
import { createPagesHandler } from "./http/pages.ts";
import { openBackend } from "./store/backend.ts";

/**
 * `npm start`: parse the environment, serve the Next.js app and the tab protocol on one port,
 * and print a dashboard link with a signed owner token (as Jupyter prints its token URL).
 * A start that fails exits non-zero with one line saying why, so a supervisor restarts or alerts.
 */

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

async function main(): Promise<void> {
  const config = parseConfig(process.env);
  if (config.unsafeDebug)
    console.warn(
      "ALLOW_UNSAFE_DEBUG=1: socket.io debug logging is on and prints every frame, secret values included",
    );
  const dev = process.env.NODE_ENV === "development";
  const authSecret = loadOrCreateAuthSecret(config);
  const log = (message: string) => console.log(message);
  const clock = systemClock();
  // Opened before Next.js so an unusable DATA_DIR, database or Redis stops the start at once.
  const backend = await openBackend(config, authSecret, { log, clock });
  const nextApp = next({ dev, dir: projectRoot, hostname: config.HOST, port: config.PORT });
  await nextApp.prepare();
  const handle = nextApp.getRequestHandler();

  // WebSocket upgrades on the one port: Socket.IO answers its own path (/socket.io/) and leaves the
  // rest alone; Next's custom server adds its own upgrade listener to this HTTP server on the first
  // request and answers hot reload (/_next/hmr) there. Its public getUpgradeHandler() does not serve
  // hot reload in a custom server, so the upgrade is not routed by hand.
  const server = await createApplication({
    config,
    authSecret,
    clock,
    log,
    backend,
    gateway: gatewayFromConfig(config, { clock, log }),
    pages: createPagesHandler({
      handle,
      frameAncestors: config.OPENWEBUI_ORIGINS,
      dev,
      openWebUiUrl: config.OPENWEBUI_URL ?? null,
      log: (message) => console.error(message),
    }),
  });

  const owner = [...config.owners][0] ?? "owner";
  const link = await mintOwnerLink({
    store: backend.store,
    key: secretKey(authSecret),
    owner,
    hours: config.OWNER_LINK_HOURS,
    baseUrl: config.PUBLIC_URL ?? server.url,
  });
  console.log(`OpenClaw Asks is running on ${server.url}`);
  console.log(describeOwnerLink(link));

  const shutdown = () => {
    console.log("stopping");
    server.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(`stopping failed: ${oneLine(error)}`);
        process.exit(1);
      },
    );
  };
  process.once("SIGINT", shutdown);
  process.once("SIGTERM", shutdown);
}

function oneLine(error: unknown): string {
  return errorMessage(error).replace(/\s*\n\s*/g, " ");
}

try {
  await main();
} catch (error) {
  console.error(`OpenClaw Asks could not start: ${oneLine(error)}`);
  process.exit(1);
}
