import type { Server, Socket } from "socket.io";
import type { z } from "zod";
import {
  type AckError,
  AskAnswerPayload,
  AsksListPayload,
  AsksWatchPayload,
  ChatLeavePayload,
  ChatViewPayload,
  type ClientEvent,
  type ClientEvents,
  type ClientToServerEvents,
  describeIssues,
  fail,
  type ServerToClientEvents,
} from "../../lib/protocol.ts";
import { type ActClaims, AuthError } from "../auth/tokens.ts";
import type { AskBroker } from "../broker/broker.ts";
import type { Tab } from "../broker/ports.ts";

/**
 * Socket.IO handlers for tab protocol v1, one factory per domain (socket.io CRUD example style),
 * typed from the protocol's event map. Each parses its payload at the boundary (the type says what a
 * client should send, not what it did): an invalid one gets INVALID and changes nothing. A handler
 * returns its ack; the transport sends it, exactly once. A handler with work left once its outcome is
 * decided may send the ack earlier through `acknowledge` (the transport then sends nothing more).
 */

/** What the handshake puts on each socket. */
export type TabSocketData = { tab: Tab };

export type TabSocket = Socket<
  ClientToServerEvents,
  ServerToClientEvents,
  Record<string, never>,
  TabSocketData
>;
export type TabIo = Server<
  ClientToServerEvents,
  ServerToClientEvents,
  Record<string, never>,
  TabSocketData
>;

export type TabHandler<E extends ClientEvent> = (
  socket: TabSocket,
  payload: ClientEvents[E]["payload"],
  acknowledge: (ack: ClientEvents[E]["ack"]) => void,
) => ClientEvents[E]["ack"] | Promise<ClientEvents[E]["ack"]>;

export const WATCHERS_ROOM = "asks:watchers";

function parse<S extends z.ZodType>(
  schema: S,
  payload: unknown,
): { ok: true; value: z.infer<S> } | { ok: false; ack: AckError } {
  const result = schema.safeParse(payload ?? {});
  return result.success
    ? { ok: true, value: result.data }
    : { ok: false, ack: fail("INVALID", describeIssues(result.error)) };
}

export function createChatHandlers(broker: AskBroker): {
  view: TabHandler<"chat:view">;
  leave: TabHandler<"chat:leave">;
} {
  return {
    view(socket, payload) {
      const parsed = parse(ChatViewPayload, payload);
      return parsed.ok ? broker.view(socket.data.tab, parsed.value.chatId) : parsed.ack;
    },
    async leave(socket, payload) {
      const parsed = parse(ChatLeavePayload, payload);
      if (!parsed.ok) return parsed.ack;
      await broker.leave(socket.data.tab.id);
      return { ok: true };
    },
  };
}

/** Checks an answer's act token (auth/tokens.ts `verifyActToken`): its claims, or an AuthError. */
export type ActCheck = (token: string) => Promise<ActClaims>;

function notAnActToken(error: unknown): undefined {
  if (error instanceof AuthError) return undefined;
  throw error;
}

export function createAskHandlers(
  broker: AskBroker,
  checkAct: ActCheck,
): {
  answer: TabHandler<"ask:answer">;
  list: TabHandler<"asks:list">;
  watch: TabHandler<"asks:watch">;
} {
  return {
    async answer(socket, payload, acknowledge) {
      const parsed = parse(AskAnswerPayload, payload);
      if (!parsed.ok) return parsed.ack;
      const { askId, answer, act } = parsed.value;
      // Checked only if the answer uses the owner's power (a question needs none): a bad or expired act
      // token counts as none, and an approval or a secret is then refused with where to answer it
      // (chat-access.ts `mayAct`).
      const tab =
        act === undefined
          ? socket.data.tab
          : { ...socket.data.tab, act: () => checkAct(act).catch(notAnActToken) };
      // The tab hears that its answer was taken before its card is closed and the end is stored.
      return broker.answer(tab, askId, answer, acknowledge);
    },
    async list(socket, payload) {
      const parsed = parse(AsksListPayload, payload);
      if (!parsed.ok) return parsed.ack;
      const { tab } = socket.data;
      const asks = await broker.list(tab, parsed.value.status);
      // A widget shows one chat, which it knows: only dashboards name chats by their titles.
      if (tab.chatClaim !== null) return { ok: true, asks };
      const titles = await broker.chatTitles(
        asks.flatMap((ask) => (ask.chatId === null ? [] : [ask.chatId])),
      );
      return { ok: true, asks, chatTitles: Object.fromEntries(titles) };
    },
    async watch(socket, payload) {
      const parsed = parse(AsksWatchPayload, payload);
      if (!parsed.ok) return parsed.ack;
      const { tab } = socket.data;
      if (!tab.isOwner || tab.chatClaim !== null)
        return fail("FORBIDDEN", "only an owner's dashboard can watch every ask");
      await socket.join(WATCHERS_ROOM);
      return { ok: true };
    },
  };
}
