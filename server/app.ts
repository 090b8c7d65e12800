import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import type { GatewayCall } from "../lib/answers.ts";
import { systemClock, type Clock } from "../lib/clock.ts";
import { AskBroker } from "./broker/broker.ts";
import { createGatewayIntake } from "./broker/intake.ts";
import type { Config } from "./config.ts";
import { GatewayLink } from "./gateway/link.ts";
import { checkQuestionRecord } from "./gateway/records.ts";
import { ChatWatcher } from "./prompts/chat-watcher.ts";
import { Retention } from "./store/retention.ts";
import { SqliteAskStore } from "./store/sqlite.ts";
import type { ServiceStore } from "./store/store.ts";
import { secretKey, verifyTabToken } from "./tabs/auth.ts";
import { createTabServer } from "./tabs/io.ts";
import { isCurrentOwnerLinkKid } from "./tabs/owner-links.ts";

/**
 * Wires the parts together: store → broker ← gateway link, broker → Socket.IO tabs, and the HTTP
 * server that also serves the Next.js app. Tests start it in-process on port 0 without the UI.
 */

export type HttpHandler = (request: IncomingMessage, response: ServerResponse) => void;

export type StartOptions = {
  config: Config;
  authSecret: string;
  clock?: Clock;
  log?: (message: string) => void;
  /** Serves pages; without it (tests) only Socket.IO and /healthz answer. */
  pages?: HttpHandler;
  store?: ServiceStore;
};

export type RunningServer = {
  url: string;
  port: number;
  broker: AskBroker;
  link: GatewayLink;
  store: ServiceStore;
  stop(): Promise<void>;
};

export async function startServer(options: StartOptions): Promise<RunningServer> {
  const { config } = options;
  const log = options.log ?? ((message: string) => console.log(message));
  const clock = options.clock ?? systemClock();
  const store = options.store ?? new SqliteAskStore(path.join(config.DATA_DIR, "asks.sqlite"), { log });
  const key = secretKey(options.authSecret);
  const isKnownKid = isCurrentOwnerLinkKid(store);

  /** Anyone may learn ok or degraded; the details (Gateway status, set-aside rows) are for an owner's token. */
  async function health(request: IncomingMessage): Promise<Record<string, unknown>> {
    const setAsideRows = store.setAsideRows();
    const status = link.status.connected && setAsideRows === 0 ? "ok" : "degraded";
    const bearer = /^Bearer (\S+)$/.exec(request.headers.authorization ?? "")?.[1];
    const identity = bearer ? await verifyTabToken(bearer, key, { maxTokenDays: config.MAX_TOKEN_DAYS, isKnownKid }).catch(() => null) : null;
    if (!identity || identity.chat !== null || !config.owners.has(identity.userId)) return { status };
    return { status, gateway: link.status, setAsideRows };
  }

  const http = createServer((request, response) => {
    if (request.url === "/healthz") {
      health(request).then(
        (body) => response.writeHead(200, { "content-type": "application/json", "cache-control": "no-store" }).end(JSON.stringify(body)),
        (error: unknown) => {
          log(`healthz failed: ${error instanceof Error ? error.message : String(error)}`);
          response.writeHead(500).end();
        },
      );
      return;
    }
    if (options.pages) return options.pages(request, response);
    response.writeHead(404).end();
  });

  const tabs = createTabServer(http, {
    key,
    owners: config.owners,
    allowedOrigins: config.OPENWEBUI_ORIGINS,
    isKnownKid,
    publicUrl: config.PUBLIC_URL,
    maxTokenDays: config.MAX_TOKEN_DAYS,
    maxConnectionsPerAddress: config.MAX_CONNECTIONS_PER_ADDRESS,
    trustedProxies: config.TRUSTED_PROXIES,
    log,
  });

  // The broker and the chat watcher answer through the link, which is created last because its
  // handler needs them; the arrow functions below only run once everything exists.
  const resolver = { execute: (call: GatewayCall) => link.execute(call) };
  const broker = new AskBroker({
    store,
    sink: tabs.sink,
    resolver,
    clock,
    owners: config.owners,
    instanceId: randomUUID(),
    hooks: { log, endedUnanswered: (ask, reason) => chatWatcher.endedUnanswered(ask, reason) },
  });
  const chatWatcher = new ChatWatcher({
    broker,
    resolver,
    chatKeys: config.chatKeys,
    agentId: config.AGENT_ID,
    clock,
    timeoutMs: config.TEXT_PROMPT_TIMEOUT_SECONDS * 1000,
    log,
  });
  const link: GatewayLink = new GatewayLink({
    url: config.OPENCLAW_GATEWAY_URL,
    token: config.OPENCLAW_GATEWAY_TOKEN,
    log,
    clock,
    handler: createGatewayIntake({
      broker,
      agentId: config.AGENT_ID,
      chatKeys: config.chatKeys,
      onChat: (event) => chatWatcher.handle(event),
      onStatus: (status) => {
        log(status.connected ? `gateway connected: ${config.OPENCLAW_GATEWAY_URL}` : `gateway: ${status.error ?? "disconnected"}`);
        tabs.broadcastStatus(status);
      },
      getQuestion: async (id) => {
        const result = await link.request<unknown>("question.get", { id }).catch(() => null);
        const record = result && typeof result === "object" && "question" in result ? (result as { question: unknown }).question : result;
        const checked = checkQuestionRecord(record);
        return checked.ok ? checked.value : null;
      },
    }),
  });
  broker.restore();
  tabs.attach(broker, () => link.status);
  const retention = new Retention({ store, clock, historyDays: config.HISTORY_DAYS, log });

  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(config.PORT, config.HOST, () => resolve());
  });
  const port = (http.address() as AddressInfo).port;
  link.start();
  retention.start();

  let stopped: Promise<void> | undefined;
  return {
    url: `http://${config.HOST}:${port}`,
    port,
    broker,
    link,
    store,
    stop() {
      stopped ??= (async () => {
        retention.stop();
        broker.shutdown();
        await link.stop();
        http.closeAllConnections();
        await tabs.close();
        store.close();
      })();
      return stopped;
    },
  };
}
