import { z } from "zod";
import { Ask, AskStatus, Decision } from "./ask.ts";
export {
  type CheckUnavailable,
  type IncompatibleProtocol,
  TAB_PROTOCOL_VERSION,
} from "./protocol-version.ts";

/**
 * Tab protocol v1 (docs/PROTOCOL.md): every event between a browser tab and the server.
 * Inbound payloads are parsed with these schemas at the boundary; the types below are inferred from them.
 */

/** A page's tab protocol version, from its handshake's `auth.protocol`: 1 when absent (lib/protocol-version.ts). */
export const HandshakeProtocol = z.number().int().positive().default(1);

const ChatId = z.string().min(1).max(200);
const AskId = z.string().min(1).max(300);
const Host = z.string().min(1).max(253);

export const ChatViewPayload = z.object({ chatId: ChatId });
export const ChatLeavePayload = z.object({});

export const TabAnswer = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("questions"),
    answers: z.record(z.string().min(1).max(100), z.array(z.string().max(4000)).max(20)),
  }),
  z.object({ type: z.literal("text"), text: z.string().max(8000) }),
  z.object({
    type: z.literal("secret"),
    value: z.string().min(1).max(16_384),
    allowedHosts: z.array(Host).max(128).optional(),
  }),
  z.object({ type: z.literal("decision"), decision: Decision }),
  z.object({ type: z.literal("cancel") }),
]);
export type TabAnswer = z.infer<typeof TabAnswer>;

/** `act`: the act token of the widget's reply, which a widget needs to approve or enter a secret (docs/PROTOCOL.md#acting). */
export const AskAnswerPayload = z.object({
  askId: AskId,
  answer: TabAnswer,
  act: z.string().min(1).max(4096).optional(),
});
export type AskAnswerPayload = z.infer<typeof AskAnswerPayload>;

export const AsksListPayload = z.object({
  status: z.union([AskStatus, z.literal("all")]).optional(),
});
export const AsksWatchPayload = z.object({});

export const ErrorCode = z.enum([
  "INVALID",
  "FORBIDDEN",
  "NOT_FOUND",
  "ALREADY_RESOLVED",
  "EXPIRED",
  "GATEWAY_ERROR",
  "RATE_LIMITED",
  /** The server failed while handling the event; its log says why. */
  "INTERNAL",
  /** The store the instances share (Redis) is unreachable: nothing was taken; try again once it is back. */
  "UNAVAILABLE",
]);
export type ErrorCode = z.infer<typeof ErrorCode>;

export type AckError = { ok: false; error: { code: ErrorCode; message: string } };
export type Ack<T extends object = object> = ({ ok: true } & T) | AckError;

/**
 * A secret tells the tab how it ended, for its toast: `stored` in the Gateway's secret store (the
 * `secrets` tool), `sent` to the agent (a text prompt), or `cancelled`.
 */
export type SecretOutcome = "stored" | "sent" | "cancelled";
/**
 * `chatMessage`: the answer to a text prompt of a `/v1` reply continues the chat as the person's next
 * message; the widget hands it to Open WebUI to submit.
 */
export type AnswerAck = Ack<{ status: AskStatus; outcome?: SecretOutcome; chatMessage?: string }>;

export const CloseReason = z.enum([
  "answered",
  "answered-elsewhere",
  "cancelled",
  "expired",
  "denied",
  "handed-off",
  "ended-as-text",
]);
export type CloseReason = z.infer<typeof CloseReason>;

export const AskClose = z.object({
  askId: AskId,
  reason: CloseReason,
  summary: z.string().optional(),
});
export type AskClose = z.infer<typeof AskClose>;

export const GatewayStatus = z.object({
  connected: z.boolean(),
  /** Epoch ms of the last change of `connected`. */
  since: z.number(),
  error: z.string().optional(),
});
export type GatewayStatus = z.infer<typeof GatewayStatus>;

/**
 * What `gateway:status` tells a tab of this instance (server/status.ts): the Gateway's link, and
 * `degraded` while the instance cannot reach the store the instances share (Redis): answers are
 * refused until it is back.
 */
export const InstanceStatus = GatewayStatus.extend({ degraded: z.string().optional() });
export type InstanceStatus = z.infer<typeof InstanceStatus>;

/** Every client event: what it carries and what its ack answers. */
export type ClientEvents = {
  "chat:view": { payload: z.input<typeof ChatViewPayload>; ack: Ack };
  "chat:leave": { payload: z.input<typeof ChatLeavePayload>; ack: Ack };
  "ask:answer": { payload: AskAnswerPayload; ack: AnswerAck };
  /** `chatTitles`: Open WebUI's titles of the listed asks' chats, where known (a dashboard's list). */
  "asks:list": {
    payload: z.input<typeof AsksListPayload>;
    ack: Ack<{ asks: Ask[]; chatTitles?: Record<string, string> }>;
  };
  "asks:watch": { payload: z.input<typeof AsksWatchPayload>; ack: Ack };
};
export type ClientEvent = keyof ClientEvents;

export type ClientToServerEvents = {
  [E in ClientEvent]: (
    payload: ClientEvents[E]["payload"],
    ack: (res: ClientEvents[E]["ack"]) => void,
  ) => void;
};

export type ChatTitle = { chatId: string; title: string };

/** A widget that is not its chat's live one any more (a newer reply's widget viewed the chat). */
export const WidgetSuperseded = z.object({ chatId: ChatId });
export type WidgetSuperseded = z.infer<typeof WidgetSuperseded>;

export interface ServerToClientEvents {
  "ask:show": (ask: Ask) => void;
  "widget:superseded": (superseded: WidgetSuperseded) => void;
  "ask:close": (close: AskClose) => void;
  "ask:changed": (ask: Ask) => void;
  /** A chat's title in Open WebUI became known or changed (dashboard feed). */
  "chat:title": (title: ChatTitle) => void;
  "gateway:status": (status: InstanceStatus) => void;
}

export function fail(code: ErrorCode, message: string): AckError {
  return { ok: false, error: { code, message } };
}

/** Turns a zod error into one readable line for an `INVALID` ack. */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => `${issue.path.length ? issue.path.join(".") : "payload"}: ${issue.message}`)
    .join("; ");
}
