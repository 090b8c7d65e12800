import type { Ask, AskStatus, Decision } from "./ask.ts";
import type { CloseReason } from "./protocol.ts";
import { CLOSE_OUTCOMES, ENDED_ELSEWHERE, STATUS_LABELS } from "./wording.ts";

/**
 * How an ask ends, in one place: the status it ends in, the summary people read (in the words of
 * wording.ts), and the reason a tab's card closes with. No zod at runtime: the browser bundles may
 * import the summaries.
 */

export type Ending = {
  status: Exclude<AskStatus, "pending">;
  summary: string;
  reason: CloseReason;
};

export const SECRET_ENTERED_SUMMARY = "•••• (secret entered)";
export const SECRET_CANCELLED_SUMMARY = "Cancelled (nothing entered)";
export const SECRET_NOT_RECEIVED_SUMMARY = "Secret not received";

export const EXPIRED: Ending = {
  status: "expired",
  summary: STATUS_LABELS.expired,
  reason: "expired",
};
export const ANSWERED_ELSEWHERE: Ending = {
  status: "answered",
  summary: CLOSE_OUTCOMES["answered-elsewhere"].summary,
  reason: "answered-elsewhere",
};
export const CANCELLED_ELSEWHERE: Ending = {
  status: "cancelled",
  summary: ENDED_ELSEWHERE.cancelled,
  reason: "answered-elsewhere",
};
/** The run stopped (Open WebUI's Stop): its questions are cancelled and its tool calls never run. */
export const RUN_STOPPED: Ending = {
  status: "cancelled",
  summary: ENDED_ELSEWHERE.stopped,
  reason: "answered-elsewhere",
};

/** The Gateway restarted: the run that raised the ask is gone, its questions and tool calls with it. */
export const GATEWAY_RESTARTED: Ending = {
  status: "cancelled",
  summary: ENDED_ELSEWHERE.gatewayRestarted,
  reason: "cancelled",
};

/** Answered at the source (Control UI, another client): the answer shows, unless it is a secret. */
export function answeredElsewhere(ask: Pick<Ask, "kind">, values: readonly string[]): Ending {
  const summary =
    ask.kind === "secret" ? SECRET_ENTERED_SUMMARY : values.join(", ") || STATUS_LABELS.answered;
  return { status: "answered", summary, reason: "answered-elsewhere" };
}

export function decidedElsewhere(decision: Decision): Ending {
  return {
    status: "answered",
    summary: ENDED_ELSEWHERE.decided(decision),
    reason: "answered-elsewhere",
  };
}

/**
 * A text prompt that ends unanswered stays in the reply as text; a secret prompt says none came.
 * `reason` is `answered-elsewhere` when the user wrote to the session instead.
 */
export function endedAsText(
  ask: Ask,
  reason: "ended-as-text" | "answered-elsewhere" = "ended-as-text",
): Ending {
  const summary =
    ask.kind === "secret"
      ? SECRET_NOT_RECEIVED_SUMMARY
      : (ask.textPrompt?.fallbackText ?? STATUS_LABELS["ended-as-text"]);
  return { status: "ended-as-text", summary, reason };
}
