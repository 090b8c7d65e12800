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
import { SqliteAskStore } from "./store/sqlite.ts";
import type { AskStore } from "./store/store.ts";
import { secretKey } from "./tabs/auth.ts";
import { createTabServer } from "./tabs/io.ts";

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
  store?: AskStore;
};

export type RunningServer = {
  url: string;
  port: number;
  broker: AskBroker;
  link: GatewayLink;
  store: AskStore;
  stop(): Promise<void>;
};

export async function startServer(options: StartOptions): Promise<RunningServer> {
  const { config } = options;
  const log = options.log ?? ((message: string) => console.log(message));
  const clock = options.clock ?? systemClock();
  const store = options.store ?? new SqliteAskStore(path.join(config.DATA_DIR, "asks.sqlite"));

  const http = createServer((request, response) => {
    if (request.url === "/healthz") {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({ ok: true, gateway: link.status }));
      return;
    }
    if (options.pages) return options.pages(request, response);
    response.writeHead(404).end();
  });

  const tabs = createTabServer(http, {
    key: secretKey(options.authSecret),
    owners: config.owners,
    allowedOrigins: config.OPENWEBUI_ORIGINS,
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

  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(config.PORT, config.HOST, () => resolve());
  });
  const port = (http.address() as AddressInfo).port;
  link.start();

  let stopped: Promise<void> | undefined;
  return {
    url: `http://${config.HOST}:${port}`,
    port,
    broker,
    link,
    store,
    stop() {
      stopped ??= (async () => {
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
