// A stand-in for Open WebUI on its own loopback port, faithful to /work/shared/open-webui/EMBEDS.md:
// chat.html/chat.js render a chat the way Open WebUI's chat page mounts embeds, and this server
// keeps the chats (Open WebUI's database) and delivers `events` to every open tab (its socket room
// `user:{id}`), storing `embeds` the way the backend does.
import { readFileSync } from "node:fs";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Page } from "playwright-core";
import { z } from "zod";
import { errorMessage } from "../../../lib/error-message.ts";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CHAT_HTML = readFileSync(path.join(HERE, "chat.html"));
const CHAT_JS = readFileSync(path.join(HERE, "chat.js"));

const hostMessageSchema = z.object({
  id: z.string().min(1),
  role: z.enum(["user", "assistant"]),
  content: z.string(),
  embeds: z.array(z.string()).optional(),
});
export type HostMessage = z.infer<typeof hostMessageSchema>;
const appendedMessagesSchema = z.tuple([
  hostMessageSchema.omit({ role: true }),
  hostMessageSchema.omit({ role: true }),
]);

/** What a Filter's `__event_emitter__` sends: `{type, data}`. */
export type HostChatEvent = { type: string; data: Record<string, unknown> };

export type OpenWebuiHost = {
  origin: string;
  /** The chat page, as `/c/{chatId}` in Open WebUI. */
  chatUrl(chatId: string): string;
  /** Replaces a chat's branch (oldest first). */
  setChat(chatId: string, messages: HostMessage[]): void;
  /** The chat as stored (what a reload shows). */
  messages(chatId: string): HostMessage[];
  /**
   * An event from a Filter's emitter bound to `messageId` (socket/main.py get_event_emitter): sent
   * to every open tab, and an `embeds` event is stored on the message as the backend does.
   */
  emit(chatId: string, messageId: string, event: HostChatEvent): void;
  stop(): Promise<void>;
};

/** Messages with `count` assistant replies, each after a user message: u1, a1, u2, a2, ... */
export function chatOfReplies(
  count: number,
  embedFor: (index: number, messageId: string) => string[] = () => [],
): HostMessage[] {
  return Array.from({ length: count }, (_, index) => {
    const n = index + 1;
    return [
      { id: `u${n}`, role: "user" as const, content: `Question ${n}` },
      {
        id: `a${n}`,
        role: "assistant" as const,
        content: `Reply ${n}`,
        embeds: embedFor(n, `a${n}`),
      },
    ];
  }).flat();
}

/** The user writes again in the tab `page` shows: a user message and the new reply's placeholder. */
export async function appendReply(
  page: Page,
  user: { id: string; content: string },
  assistant: { id: string; content: string; embeds?: string[] },
): Promise<void> {
  await page.evaluate(
    ([userMessage, assistantMessage]) =>
      (
        window as unknown as {
          openWebuiHost: { appendReply(u: unknown, a: unknown): Promise<void> };
        }
      ).openWebuiHost.appendReply(userMessage, assistantMessage),
    [user, assistant] as const,
  );
}

/** Opens a chat in `page` and waits until the tab listens for events. */
export async function openChat(page: Page, host: OpenWebuiHost, chatId: string): Promise<void> {
  await page.goto(host.chatUrl(chatId));
  await page.waitForSelector("body[data-ready=true]");
}

export async function startOpenWebuiHost(): Promise<OpenWebuiHost> {
  const chats = new Map<string, HostMessage[]>();
  const tabs = new Set<ServerResponse>();

  function chatMessages(chatId: string): HostMessage[] {
    const messages = chats.get(chatId);
    if (!messages) throw new Error(`no chat ${chatId} on the host`);
    return messages;
  }

  // socket/main.py:1036-1050: without `replace` the new embeds go before the stored ones; with it
  // they replace them.
  function storeEmbeds(chatId: string, messageId: string, data: Record<string, unknown>): void {
    const message = chats.get(chatId)?.find((candidate) => candidate.id === messageId);
    if (!message) return;
    const embeds = z.array(z.string()).parse(data.embeds ?? []);
    message.embeds = data.replace === true ? embeds : [...embeds, ...(message.embeds ?? [])];
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? "/", "http://host.invalid");
    const chatApi = /^\/api\/chats\/([^/]+)(\/messages)?$/.exec(url.pathname);
    if (request.method === "GET" && url.pathname.startsWith("/c/")) {
      response.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(CHAT_HTML);
    } else if (request.method === "GET" && url.pathname === "/chat.js") {
      response.writeHead(200, { "content-type": "text/javascript; charset=utf-8" }).end(CHAT_JS);
    } else if (request.method === "GET" && url.pathname === "/api/events") {
      response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-store" });
      response.write(": open\n\n");
      tabs.add(response);
      request.on("close", () => tabs.delete(response));
    } else if (request.method === "GET" && chatApi && !chatApi[2]) {
      const chatId = decodeURIComponent(chatApi[1]!);
      response
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ messages: chats.get(chatId) ?? [] }));
    } else if (request.method === "POST" && chatApi?.[2]) {
      const [user, assistant] = appendedMessagesSchema.parse(JSON.parse(await readBody(request)));
      chatMessages(decodeURIComponent(chatApi[1]!)).push(
        { ...user, role: "user" },
        { ...assistant, role: "assistant" },
      );
      response.writeHead(204).end();
    } else {
      response.writeHead(404).end();
    }
  }

  const server: Server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(400, { "content-type": "text/plain" });
      response.end(errorMessage(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    origin,
    chatUrl: (chatId) => `${origin}/c/${encodeURIComponent(chatId)}`,
    setChat: (chatId, messages) =>
      chats.set(chatId, hostMessageSchema.array().parse(structuredClone(messages))),
    messages: (chatId) => structuredClone(chatMessages(chatId)),
    emit(chatId, messageId, event) {
      if (event.type === "embeds") storeEmbeds(chatId, messageId, event.data);
      const frame = `data: ${JSON.stringify({ chat_id: chatId, message_id: messageId, data: event })}\n\n`;
      for (const tab of tabs) tab.write(frame);
    },
    stop: () =>
      new Promise<void>((resolve) => {
        for (const tab of tabs) tab.end();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    request.on("error", reject);
  });
}
