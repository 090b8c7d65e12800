import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Agent } from "node:https";
import type { AddressInfo } from "node:net";
import type { Clock } from "../lib/clock.ts";
import { createDeviceRoutes } from "./auth/device-routes.ts";
import { createAuth } from "./auth/index.ts";
import { filterSecret } from "./auth/keys.ts";
import { startLinkCheck } from "./auth/link-check.ts";
import { mintActToken } from "./auth/tokens.ts";
import { AskBroker } from "./broker/broker.ts";
import type { Presence } from "./broker/ports.ts";
import type { Config } from "./config.ts";
import type { Gateway } from "./gateway/gateway.ts";
import { capConnections, timeoutOptions } from "./http/connection-limits.ts";
import { createFilterRoute, filterKey } from "./http/filter-route.ts";
import { createHealthRoute } from "./http/health-route.ts";
import { routeRequests } from "./http/router.ts";
import { createWidgetPageRoute } from "./http/widget-page.ts";
import { ChatWatcher } from "./prompts/chat-watcher.ts";
import { createPush } from "./push/index.ts";
import { ServiceStatus } from "./status.ts";
import type { Backend } from "./store/backend.ts";
import { Retention } from "./store/retention.ts";
import { REPLY_START_KEEP_MS, type ServiceStore } from "./store/store.ts";
import { trustedProxies } from "./tabs/address.ts";
import { createTabServer } from "./tabs/io.ts";

/**
 * The wiring, in one place and in one direction (socket.io CRUD example style): the Gateway adapter
 * and the backend (every store, presence and the tabs' Socket.IO adapter, SQLite's or Redis's:
 * store/backend.ts) come in built; the broker listens to the Gateway; the chat watcher to the
 * Gateway's runs and the broker's endings; the tabs and the push notifier to the broker (and the tabs
 * to the Gateway's status), and both to auth's revocations (auth/). Nothing is set after
 * construction. Tests start it in-process on port 0 without the UI.
 */

export type HttpHandler = (request: IncomingMessage, response: ServerResponse) => void;

export type ApplicationOptions = {
  config: Config;
  /** Opened (openBackend); the application owns it from here and closes it on stop. */
  backend: Backend;
  gateway: Gateway;
  clock: Clock;
  authSecret: string;
  log: (message: string) => void;
  /** Serves pages; without it (tests) only Socket.IO and /healthz answer. */
  pages?: HttpHandler;
  /** The HTTPS agent push notifications are sent with (one trusting a private CA), with PUSH_ALLOW_PRIVATE_ENDPOINTS only. */
  pushAgent?: Agent;
};

export type Application = {
  url: string;
  port: number;
  broker: AskBroker;
  gateway: Gateway;
  presence: Presence;
  store: ServiceStore;
  push: Awaited<ReturnType<typeof createPush>>;
  stop(): Promise<void>;
};

export async function createApplication(options: ApplicationOptions): Promise<Application> {
  const { config, backend, gateway, clock, log } = options;
  const { store, presence, devices, instanceId } = backend;
  const auth = createAuth({
    authSecret: options.authSecret,
    store,
    devices,
    owners: config.owners,
    maxTokenDays: config.MAX_TOKEN_DAYS,
    clock,
  });
  const { key, ownerOf } = auth;
  let port = config.PORT;
  const status = new ServiceStatus(gateway, backend.link);

  const broker = new AskBroker({
    store,
    presence,
    source: gateway,
    clock,
    owners: config.owners,
    allowUnvouched: config.ALLOW_UNVOUCHED_RUNS === "1",
    instanceId,
    log,
  });
  const chatWatcher = new ChatWatcher({
    broker,
    runs: gateway,
    chatKeys: config.chatKeys,
    agentId: config.AGENT_ID,
    clock,
    timeoutMs: config.TEXT_PROMPT_TIMEOUT_SECONDS * 1000,
    log,
  });

  const deviceRoutes = createDeviceRoutes({
    store: devices,
    key,
    revocations: auth.revocations,
    maxTokenDays: config.MAX_TOKEN_DAYS,
    baseUrl: () => config.PUBLIC_URL ?? `http://${config.HOST}:${port}`,
    now: () => clock.now(),
    ownerOf,
    isOwnerLinkKid: auth.isOwnerLinkKid,
    log,
  });

  const push = await createPush({
    config,
    authSecret: options.authSecret,
    broker,
    clock,
    log,
    dashboardUrl: () => config.PUBLIC_URL ?? `http://${config.HOST}:${port}`,
    ownerOf,
    isKnownKid: auth.isKnownKid,
    isOwnerLinkKid: auth.isOwnerLinkKid,
    agent: options.pushAgent,
    backend: backend.push,
  });

  const filterRoute = createFilterRoute({
    key: filterKey(filterSecret(options.authSecret)),
    legacyKey: filterKey(options.authSecret),
    now: () => clock.now(),
    replyStarted: (start) => broker.replyStarted(start),
    // It lives as long as the server keeps the reply's start (the run's asks wait less), never longer
    // than any token may.
    mintAct: (start) =>
      mintActToken(key, {
        userId: start.userId,
        chat: start.chatId,
        reply: start.reply,
        ttlSeconds: Math.min(REPLY_START_KEEP_MS, config.MAX_TOKEN_DAYS * 86_400_000) / 1000,
        now: clock.now(),
      }),
    chatTitled: (chatId, title) => broker.chatTitled(chatId, title),
    log,
  });

  const widgetPage = createWidgetPageRoute({
    broker,
    key,
    embedKey: auth.embedKey,
    owners: config.owners,
    maxTokenDays: config.MAX_TOKEN_DAYS,
    frameAncestors: config.OPENWEBUI_ORIGINS,
    now: () => clock.now(),
  });
  const serveApp = (request: IncomingMessage, response: ServerResponse): void => {
    if (options.pages) return options.pages(request, response);
    response.writeHead(404).end();
  };
  const http = createServer(
    timeoutOptions({
      headersTimeoutMs: config.HEADERS_TIMEOUT_SECONDS * 1000,
      requestTimeoutMs: config.REQUEST_TIMEOUT_SECONDS * 1000,
    }),
    routeRequests(
      [
        createHealthRoute({ gateway, store, link: backend.link, ownerOf }),
        { name: "push", ...push.routes },
        { name: "devices", ...deviceRoutes },
        { name: "filter endpoint", ...filterRoute },
        // An idle widget (not its chat's latest reply) is served here, without the app; the live one by the app.
        {
          name: "widget page",
          handles: () => true,
          handle: async (request, response) => {
            if (!(await widgetPage(request, response))) serveApp(request, response);
          },
        },
      ],
      log,
    ),
  );
  capConnections(http, {
    maxPerAddress: config.MAX_CONNECTIONS_PER_ADDRESS,
    trusted: trustedProxies(config.TRUSTED_PROXIES),
    log,
  });
  const tabs = createTabServer(http, {
    broker,
    gateway: status,
    adapter: backend.socketAdapter,
    key,
    embedKey: auth.embedKey,
    owners: config.owners,
    allowedOrigins: config.OPENWEBUI_ORIGINS,
    isKnownKid: auth.isKnownKid,
    publicUrl: config.PUBLIC_URL,
    maxTokenDays: config.MAX_TOKEN_DAYS,
    maxConnectionsPerAddress: config.MAX_CONNECTIONS_PER_ADDRESS,
    trustedProxies: config.TRUSTED_PROXIES,
    now: () => clock.now(),
    log,
  });
  // A revoked device's open sockets are closed, on every instance, and its push subscriptions go with
  // it: its notifications carry action tokens.
  auth.revocations.on("link:revoked", (kid) => tabs.disconnectLink(kid));
  auth.revocations.on("link:revoked", (kid) => push.store.forgetDevice(kid));
  const retention = new Retention({ store, clock, historyDays: config.HISTORY_DAYS, log });

  await backend.start();
  await broker.restore();
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(config.PORT, config.HOST, () => resolve());
  });
  port = (http.address() as AddressInfo).port;
  gateway.start();
  retention.start();
  const linkCheck = startLinkCheck({ check: () => tabs.disconnectRevokedLinks(), clock, log });

  let stopped: Promise<void> | undefined;
  return {
    url: `http://${config.HOST}:${port}`,
    port,
    broker,
    gateway,
    presence,
    store,
    push,
    stop() {
      stopped ??= (async () => {
        retention.stop();
        linkCheck.stop();
        chatWatcher.stop();
        broker.shutdown();
        await gateway.stop();
        http.closeAllConnections();
        await tabs.close();
        await push.close();
        status.stop();
        await backend.close();
      })();
      return stopped;
    },
  };
}
