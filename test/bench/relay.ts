import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { GatewayClient } from "@openclaw/gateway-client";
import { PROTOCOL_VERSION } from "@openclaw/gateway-protocol/version";
import { Redis } from "ioredis";
import { Server, type Socket } from "socket.io";
import { OPERATOR_CAPS, OPERATOR_SCOPES } from "../../server/gateway/link.ts";

/**
 * The bare relay the product is compared with: the same official Gateway client receiving the same
 * fake Gateway event, and one `socket.emit` to the tab that registered for the chat. No validation,
 * no store, no policy, no routing beyond one Map lookup. Same Socket.IO version and options as the
 * product's tab server, on its own HTTP server in the same process.
 *
 * For the matched (information-only) baselines it also does the least a handoff and an answer need:
 * `chat:view` from a newer tab re-sends the chat's last ask there and closes it on the old tab;
 * `ask:answer` forwards `question.resolve` to the Gateway and acks when it answers.
 *
 * With `redisUrl` it is the floor under delivery across instances: each event goes through one
 * PUBLISH on that Redis to a subscriber of its own before the emit (one Redis hop, nothing else).
 */

const SESSION_PREFIX = "agent:dev:openwebui:";

export type Relay = {
  url: string;
  sockets(): number;
  stop(): Promise<void>;
};

type RelayAnswer = { askId: string; answer: { answers: Record<string, string[]> } };

export async function startRelay(gatewayUrl: string, gatewayToken: string, options: { redisUrl?: string } = {}): Promise<Relay> {
  const http = createServer((_request, response) => response.writeHead(404).end());
  const io = new Server(http, { maxHttpBufferSize: 64 * 1024, serveClient: false });
  const viewers = new Map<string, Socket>();
  const lastAsk = new Map<string, { id: string; payload: unknown }>();
  const show = (chat: string, record: unknown) => viewers.get(chat)?.emit("ask:show", record);
  const hop = options.redisUrl ? { publisher: new Redis(options.redisUrl), subscriber: new Redis(options.redisUrl) } : null;
  if (hop) {
    await hop.subscriber.subscribe("relay-cards");
    hop.subscriber.on("message", (_channel: string, message: string) => {
      const { chat, record } = JSON.parse(message) as { chat: string; record: unknown };
      show(chat, record);
    });
  }

  const hello = Promise.withResolvers<void>();
  const client = new GatewayClient({
    url: gatewayUrl,
    token: gatewayToken,
    minProtocol: PROTOCOL_VERSION,
    maxProtocol: PROTOCOL_VERSION,
    role: "operator",
    scopes: OPERATOR_SCOPES,
    caps: OPERATOR_CAPS,
    clientDisplayName: "bench relay",
    onHelloOk: () => hello.resolve(),
    onConnectError: (error) => hello.reject(error),
    onEvent: (frame) => {
      if (frame.event !== "question.requested") return;
      const record = frame.payload as { id: string; sessionKey?: string };
      const chat = record.sessionKey?.startsWith(SESSION_PREFIX) ? record.sessionKey.slice(SESSION_PREFIX.length) : null;
      if (chat === null) return;
      lastAsk.set(chat, { id: record.id, payload: record });
      if (hop) hop.publisher.publish("relay-cards", JSON.stringify({ chat, record })).catch(() => {});
      else show(chat, record);
    },
  });

  io.on("connection", (socket) => {
    let viewing: string | null = null;
    socket.on("chat:view", (payload: { chatId: string }, ack: (response: unknown) => void) => {
      const chat = payload.chatId;
      const previous = viewers.get(chat);
      viewers.set(chat, socket);
      viewing = chat;
      const ask = lastAsk.get(chat);
      if (ask && previous && previous !== socket) {
        previous.emit("ask:close", { askId: ask.id, reason: "handed-off" });
        socket.emit("ask:show", ask.payload);
      }
      ack({ ok: true });
    });
    socket.on("ask:answer", (payload: RelayAnswer, ack: (response: unknown) => void) => {
      client.request("question.resolve", { id: payload.askId, answers: { answers: payload.answer.answers } }).then(
        () => ack({ ok: true }),
        (error: unknown) => ack({ ok: false, error: { code: "GATEWAY_ERROR", message: String(error) } }),
      );
    });
    socket.on("disconnect", () => {
      if (viewing !== null && viewers.get(viewing) === socket) viewers.delete(viewing);
    });
  });

  client.start();
  await hello.promise;
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (http.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    sockets: () => io.engine.clientsCount,
    async stop() {
      await client.stopAndWait({ timeoutMs: 2000 }).catch(() => client.stop());
      hop?.publisher.disconnect();
      hop?.subscriber.disconnect();
      http.closeAllConnections();
      await io.close();
    },
  };
}
