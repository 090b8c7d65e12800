import type { AskReply } from "../../lib/answers.ts";
import type { Ask } from "../../lib/ask.ts";

/**
 * Domain operations as Gateway method calls (docs/ARCHITECTURE.md#sources-and-answers): a reply to an ask, a refusal by policy, a
 * notice to a session. The only place that knows the resolve methods and their parameter shapes.
 */

export type GatewayCall =
  | { method: "question.resolve"; params: QuestionResolveParams }
  | {
      method: "plugin.approval.resolve" | "exec.approval.resolve";
      params: { id: string; decision: AskReplyDecision };
    }
  | {
      method: "chat.send";
      params: { sessionKey: string; message: string; idempotencyKey: string };
    };

type AskReplyDecision = Extract<AskReply, { type: "decision" }>["decision"];

type QuestionResolveParams =
  | {
      id: string;
      answers: { answers: Record<string, string[]> };
      secretStoreAllowedHosts?: string[];
    }
  | { id: string; cancel: true };

/** The Gateway's `details.reason` values that mean the ask had already ended there. */
export const ALREADY_ENDED_REASONS: ReadonlySet<string> = new Set([
  "QUESTION_ALREADY_TERMINAL",
  "QUESTION_NOT_FOUND",
  "APPROVAL_ALREADY_RESOLVED",
  "APPROVAL_NOT_FOUND",
]);

/**
 * A text prompt is answered by continuing the run with `chat.send`. The idempotency key doubles as
 * the new run's id, so the chat events of that run are known to be ours, not the user typing.
 */
const ANSWER_SUFFIX = ":answer";
const NOTICE_SUFFIX = ":notice";

export function isOwnRun(runId: string): boolean {
  return (
    runId.startsWith("prompt:") && (runId.endsWith(ANSWER_SUFFIX) || runId.endsWith(NOTICE_SUFFIX))
  );
}

export function replyCall(ask: Ask, reply: AskReply): GatewayCall {
  switch (reply.type) {
    case "message":
      return {
        method: "chat.send",
        params: {
          sessionKey: ask.sessionKey,
          message: reply.text,
          idempotencyKey: `${ask.id}${ANSWER_SUFFIX}`,
        },
      };
    case "decision":
      return {
        method:
          ask.source === "gateway.exec-approval"
            ? "exec.approval.resolve"
            : "plugin.approval.resolve",
        params: { id: ask.id, decision: reply.decision },
      };
    case "cancel":
      return { method: "question.resolve", params: { id: ask.id, cancel: true } };
    case "answers": {
      const params: QuestionResolveParams = { id: ask.id, answers: { answers: reply.answers } };
      if (reply.allowedHosts) params.secretStoreAllowedHosts = reply.allowedHosts;
      return { method: "question.resolve", params };
    }
  }
}

/** Refusing by policy: a question (or secret request) is cancelled, an approval denied; a text prompt needs nothing. */
export function refusalCall(ask: Ask): GatewayCall | null {
  switch (ask.source) {
    case "gateway.question":
    case "gateway.secret":
      return replyCall(ask, { type: "cancel" });
    case "gateway.plugin-approval":
    case "gateway.exec-approval":
      return replyCall(ask, { type: "decision", decision: "deny" });
    case "text-prompt":
      return null;
  }
}

/** Tells the session of a text prompt something without asking in chat (sent once: the key is fixed). */
export function noticeCall(ask: Ask, message: string): GatewayCall {
  return {
    method: "chat.send",
    params: { sessionKey: ask.sessionKey, message, idempotencyKey: `${ask.id}${NOTICE_SUFFIX}` },
  };
}
