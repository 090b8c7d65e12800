import type { Socket } from "socket.io";
import {
  AskAnswerPayload,
  AsksListPayload,
  AsksWatchPayload,
  ChatLeavePayload,
  ChatViewPayload,
  describeIssues,
  fail,
  type Ack,
  type AnswerAck,
  type ClientToServerEvents,
  type ServerToClientEvents,
} from "../../lib/protocol.ts";
import type { z } from "zod";
import type { Ask } from "../../lib/ask.ts";
import type { AskBroker, Tab } from "../broker/broker.ts";

/**
 * Socket.IO handlers for tab protocol v1, one factory per domain (socket.io CRUD example style).
 * Each parses its payload at the boundary: an invalid one gets INVALID and changes nothing.
 */

export type TabSocket = Socket<ClientToServerEvents, ServerToClientEvents, Record<string, never>, { tab: Tab }>;

/** Sends the event's ack; the transport makes sure it is sent once, and only when the client asked for one. */
export type Respond = (response: Ack<{ asks: Ask[] }> | AnswerAck | Ack) => void;

export const WATCHERS_ROOM = "asks:watchers";

function parse<S extends z.ZodType>(schema: S, payload: unknown): { ok: true; value: z.infer<S> } | { ok: false; ack: Ack } {
  const result = schema.safeParse(payload ?? {});
  return result.success ? { ok: true, value: result.data } : { ok: false, ack: fail("INVALID", describeIssues(result.error)) };
}

export function createChatHandlers(broker: AskBroker) {
  return {
    view(socket: TabSocket, payload: unknown, respond: Respond) {
      const parsed = parse(ChatViewPayload, payload);
      respond(parsed.ok ? broker.view(socket.data.tab, parsed.value.chatId) : parsed.ack);
    },
    leave(socket: TabSocket, payload: unknown, respond: Respond) {
      const parsed = parse(ChatLeavePayload, payload);
      if (parsed.ok) broker.leave(socket.data.tab.id);
      respond(parsed.ok ? { ok: true } : parsed.ack);
    },
  };
}

export function createAskHandlers(broker: AskBroker) {
  return {
    async answer(socket: TabSocket, payload: unknown, respond: Respond) {
      const parsed = parse(AskAnswerPayload, payload);
      if (!parsed.ok) return respond(parsed.ack);
      respond(await broker.answer(socket.data.tab, parsed.value.askId, parsed.value.answer));
    },
    list(socket: TabSocket, payload: unknown, respond: Respond) {
      const parsed = parse(AsksListPayload, payload);
      if (!parsed.ok) return respond(parsed.ack);
      respond({ ok: true, asks: broker.list(socket.data.tab, parsed.value.status) });
    },
    async watch(socket: TabSocket, payload: unknown, respond: Respond) {
      const parsed = parse(AsksWatchPayload, payload);
      if (!parsed.ok) return respond(parsed.ack);
      const { tab } = socket.data;
      if (!tab.isOwner || tab.chatClaim !== null) return respond(fail("FORBIDDEN", "only an owner's dashboard can watch every ask"));
      await socket.join(WATCHERS_ROOM);
      respond({ ok: true });
    },
  };
}
