import type { AskStatus, Decision } from "./ask.ts";
import type { CloseReason } from "./protocol.ts";

/**
 * The words the server and both pages use for decisions and for how an ask ended. Type imports
 * only: the browser bundles import this file, and zod must stay out of them.
 */

export const DECISION_LABELS: Record<Decision, string> = {
  deny: "Deny",
  "allow-once": "Allow once",
  "allow-always": "Always allow",
};

/** How a finished ask ended, in one or a few words (history, ❓ Ask User records). */
export const STATUS_LABELS: Record<AskStatus, string> = {
  pending: "Pending",
  answered: "Answered",
  cancelled: "Cancelled",
  expired: "Expired",
  denied: "Denied",
  "ended-as-text": "Left in the reply as text",
};

/**
 * What a tab shows when an ask closes on it (`ask:close`), when the server sends no summary. A
 * hand-off is not an ending: the ask is still pending, in a newer tab.
 */
export const CLOSE_OUTCOMES: Record<Exclude<CloseReason, "handed-off">, { status: AskStatus; summary: string }> = {
  answered: { status: "answered", summary: STATUS_LABELS.answered },
  "answered-elsewhere": { status: "answered", summary: "Answered elsewhere" },
  cancelled: { status: "cancelled", summary: STATUS_LABELS.cancelled },
  expired: { status: "expired", summary: STATUS_LABELS.expired },
  denied: { status: "denied", summary: STATUS_LABELS.denied },
  "ended-as-text": { status: "ended-as-text", summary: STATUS_LABELS["ended-as-text"] },
};
