import type { ChatEvent, QuestionRecord, QuestionResolvedEvent } from "@openclaw/gateway-protocol";
import { type Ask, Decision } from "../../lib/ask.ts";
import {
  ANSWERED_ELSEWHERE,
  answeredElsewhere,
  CANCELLED_ELSEWHERE,
  decidedElsewhere,
  type Ending,
  EXPIRED,
  GATEWAY_RESTARTED,
  RUN_STOPPED,
} from "../../lib/outcomes.ts";
import type { GatewayStatus } from "../../lib/protocol.ts";
import { belongsToAgent, type ChatKeyPattern, parseSessionKey } from "../../lib/session-key.ts";
import {
  type AskContext,
  askFromExecApproval,
  askFromPluginApproval,
  askFromQuestionRecord,
} from "../../lib/sources/gateway.ts";
import type { Arrival, Outcome, SourceListing } from "../broker/ports.ts";
import type { RunUpdate } from "../prompts/chat-watcher.ts";
import { isOwnRun } from "./calls.ts";
import type { GatewayHandler } from "./link.ts";
import type { ApprovalResolved } from "./records.ts";

/**
 * Turns validated Gateway records into domain events: only sessions of the configured agent, each on
 * the chat its session key names (sub-agents and unmatched keys: dashboard only).
 */

export type IntakeSink = {
  arrived: (ask: Ask, arrival: Arrival) => void;
  ended(askId: string, outcome: Outcome): void;
  listed(listing: SourceListing): void;
  run(update: RunUpdate): void;
  status(status: GatewayStatus): void;
};

export type IntakeOptions = {
  agentId: string;
  chatKeys: ChatKeyPattern;
  sink: IntakeSink;
  /** Looks a question up at the Gateway, to tell how it ended while this service was away. */
  getQuestion(id: string): Promise<QuestionRecord | null>;
};

/**
 * Who cancels a question whose requester went away: the run's HTTP client disconnected (Open WebUI's
 * Stop on the `/v1` path).
 */
const REQUESTER_INACTIVE = "requester-inactive";
/** Who denies an approval whose run's caller went away (the same Stop). */
const APPROVAL_SCOPE_CLOSED = "approval-scope-closed";

/**
 * How a question ended, from its `question.resolved` event or its record. Only the record says who
 * cancelled it: a question cancelled because its run stopped reads as stopped.
 */
export function questionOutcome(event: QuestionResolvedEvent | QuestionRecord): Outcome | null {
  switch (event.status) {
    case "answered": {
      const values = Object.values(event.answers?.answers ?? {}).flat();
      return (ask: Ask) => answeredElsewhere(ask, values);
    }
    case "cancelled":
      return "resolvedBy" in event && event.resolvedBy === REQUESTER_INACTIVE
        ? RUN_STOPPED
        : CANCELLED_ELSEWHERE;
    case "expired":
      return EXPIRED;
    default:
      return null;
  }
}

/**
 * The Gateway reports an approval's expiry as a `deny` nobody made, stamped at or after its deadline;
 * any other resolution is a decision made elsewhere.
 */
export function approvalOutcome(event: ApprovalResolved): Outcome {
  if (!event.decision) return EXPIRED;
  if (event.resolvedBy === APPROVAL_SCOPE_CLOSED) return RUN_STOPPED;
  const decision = Decision.safeParse(event.decision);
  if (!decision.success) return ANSWERED_ELSEWHERE;
  return (ask: Ask): Ending => {
    const expiry =
      decision.data === "deny" &&
      (event.resolvedBy ?? null) === null &&
      ask.expiresAt !== null &&
      event.ts !== undefined &&
      event.ts >= ask.expiresAt;
    return expiry ? EXPIRED : decidedElsewhere(decision.data);
  };
}

/** The assistant text of a chat frame: `message` is the cumulative reply, `{content: [{type: "text", text}]}` or a string. */
export function messageText(message: unknown): string | null {
  if (typeof message === "string") return message;
  if (!message || typeof message !== "object") return null;
  const content = (message as { content?: unknown }).content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return null;
  const texts = (content as unknown[]).filter((part): part is { type: "text"; text: string } => {
    const { type, text } = (part ?? {}) as { type?: unknown; text?: unknown };
    return type === "text" && typeof text === "string";
  });
  return texts.length > 0 ? texts.map((part) => part.text).join("") : null;
}

export function runUpdate(event: ChatEvent): RunUpdate {
  const run = { sessionKey: event.sessionKey, runId: event.runId, ownRun: isOwnRun(event.runId) };
  switch (event.state) {
    case "status":
      return { ...run, state: "started" };
    case "delta": {
      const text = messageText(event.message);
      // A replacing frame's deltaText is the whole new reply, not a suffix.
      if (text !== null) return { ...run, state: "text", text, snapshot: true };
      return { ...run, state: "text", text: event.deltaText, snapshot: event.replace === true };
    }
    case "final":
      return { ...run, state: "final", text: messageText(event.message) };
    case "aborted":
    case "error":
      return { ...run, state: "stopped" };
  }
}

export function createIntake(options: IntakeOptions): GatewayHandler {
  const { agentId, chatKeys, sink } = options;

  const ours = (sessionKey: string | null | undefined, recordAgentId: string | null | undefined) =>
    belongsToAgent(sessionKey ?? undefined, recordAgentId ?? undefined, agentId);
  const context = (sessionKey: string | null | undefined): AskContext => {
    const chat =
      sessionKey && !parseSessionKey(sessionKey)?.isSubagent ? chatKeys.chatOf(sessionKey) : null;
    return { chatId: chat?.chatId ?? null, replyId: chat?.replyId ?? null, agentId };
  };

  return {
    question(record, arrival) {
      if (ours(record.sessionKey, record.agentId))
        sink.arrived(askFromQuestionRecord(record, context(record.sessionKey)), arrival);
    },
    questionResolved(event) {
      // The event does not say who cancelled: the record does (a stopped run's questions read as stopped).
      if (event.status !== "cancelled") {
        const outcome = questionOutcome(event);
        if (outcome) sink.ended(event.id, outcome);
        return;
      }
      options.getQuestion(event.id).then(
        (record) => sink.ended(event.id, questionOutcome(record ?? event) ?? CANCELLED_ELSEWHERE),
        () => sink.ended(event.id, CANCELLED_ELSEWHERE),
      );
    },
    pluginApproval(event, arrival) {
      if (ours(event.request.sessionKey, event.request.agentId))
        sink.arrived(askFromPluginApproval(event, context(event.request.sessionKey)), arrival);
    },
    execApproval(event, arrival) {
      if (ours(event.request.sessionKey, event.request.agentId))
        sink.arrived(askFromExecApproval(event, context(event.request.sessionKey)), arrival);
    },
    approvalResolved(event) {
      sink.ended(event.id, approvalOutcome(event));
    },
    chat(event) {
      if (ours(event.sessionKey, event.agentId)) sink.run(runUpdate(event));
    },
    backfilled(live) {
      // Text prompts are not listed by the Gateway; their own timeout still ends them.
      sink.listed({
        live: new Map([
          ["gateway.question", live.questions],
          ["gateway.secret", live.questions],
          ["gateway.plugin-approval", live.pluginApprovals],
          ["gateway.exec-approval", live.execApprovals],
        ]),
        async outcomeOf(ask) {
          const isQuestion = ask.source === "gateway.question" || ask.source === "gateway.secret";
          const record = isQuestion ? await options.getQuestion(ask.id) : null;
          if (record) return questionOutcome(record);
          // Raised by a Gateway process that is gone: its run went with it (nobody let it expire).
          const { gatewayStartedAt } = live;
          return gatewayStartedAt !== undefined && ask.createdAt < gatewayStartedAt
            ? GATEWAY_RESTARTED
            : null;
        },
      });
    },
    status(status) {
      sink.status(status);
    },
  };
}
