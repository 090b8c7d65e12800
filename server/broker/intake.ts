import type { ChatEvent, QuestionRecord, QuestionResolvedEvent } from "@openclaw/gateway-protocol";
import { SECRET_ENTERED_SUMMARY, type Ask } from "../../lib/ask.ts";
import { DECISION_LABELS } from "../../lib/labels.ts";
import type { GatewayStatus } from "../../lib/protocol.ts";
import { belongsToAgent, parseSessionKey, type ChatKeyPattern } from "../../lib/session-key.ts";
import {
  askFromExecApproval,
  askFromPluginApproval,
  askFromQuestionRecord,
  isApprovalExpiry,
  type ApprovalResolved,
  type ExecApprovalRequested,
  type PluginApprovalRequested,
} from "../../lib/sources/gateway.ts";
import type { GatewayHandler } from "../gateway/link.ts";
import type { AskBroker, ExternalEnd } from "./broker.ts";

/**
 * Turns validated Gateway records into broker calls: only sessions of the configured agent, each on the
 * chat its session key names (sub-agents and unmatched keys: dashboard only).
 */
export type IntakeOptions = {
  broker: AskBroker;
  agentId: string;
  chatKeys: ChatKeyPattern;
  onStatus(status: GatewayStatus): void;
  onChat?(event: ChatEvent): void;
  /** Looks a question up at the Gateway, to tell how it ended while this service was away. */
  getQuestion?(id: string): Promise<QuestionRecord | null>;
};

export function createGatewayIntake(options: IntakeOptions): GatewayHandler {
  const { broker, agentId, chatKeys } = options;

  const chatOf = (sessionKey: string | null | undefined): string | null => {
    if (!sessionKey || parseSessionKey(sessionKey)?.isSubagent) return null;
    return chatKeys.chatIdOf(sessionKey);
  };
  const ours = (sessionKey: string | null | undefined, recordAgentId: string | null | undefined) =>
    belongsToAgent(sessionKey ?? undefined, recordAgentId ?? undefined, agentId);
  const context = (sessionKey: string | null | undefined) => ({ chatId: chatOf(sessionKey), agentId });

  const questionEnd = (ask: Ask | undefined, event: QuestionResolvedEvent | QuestionRecord): ExternalEnd | null => {
    switch (event.status) {
      case "answered": {
        const values = Object.values(event.answers?.answers ?? {}).flat();
        const summary = ask?.kind === "secret" ? SECRET_ENTERED_SUMMARY : values.join(", ") || "Answered";
        return { status: "answered", summary, reason: "answered-elsewhere" };
      }
      case "cancelled":
        return { status: "cancelled", summary: "Cancelled elsewhere", reason: "answered-elsewhere" };
      case "expired":
        return { status: "expired", summary: "Expired", reason: "expired" };
      default:
        return null;
    }
  };

  return {
    question(record) {
      if (!ours(record.sessionKey, record.agentId)) return;
      void broker.receive(askFromQuestionRecord(record, context(record.sessionKey)));
    },
    questionResolved(event) {
      const end = questionEnd(broker.getPending(event.id), event);
      if (end) broker.end(event.id, end);
    },
    pluginApproval(event: PluginApprovalRequested) {
      if (!ours(event.request.sessionKey, event.request.agentId)) return;
      void broker.receive(askFromPluginApproval(event, context(event.request.sessionKey)));
    },
    execApproval(event: ExecApprovalRequested) {
      if (!ours(event.request.sessionKey, event.request.agentId)) return;
      void broker.receive(askFromExecApproval(event, context(event.request.sessionKey)));
    },
    approvalResolved(_kind, event: ApprovalResolved) {
      const ask = broker.getPending(event.id);
      if (!ask) return;
      if (isApprovalExpiry(event, ask.expiresAt) || !event.decision) {
        broker.end(event.id, { status: "expired", summary: "Expired", reason: "expired" });
        return;
      }
      const label = DECISION_LABELS[event.decision as keyof typeof DECISION_LABELS] ?? event.decision;
      broker.end(event.id, { status: "answered", summary: `${label} (elsewhere)`, reason: "answered-elsewhere" });
    },
    chat(event) {
      if (!ours(event.sessionKey, event.agentId)) return;
      options.onChat?.(event);
    },
    async backfilled(live) {
      await Promise.all([
        broker.reconcile(["gateway.question", "gateway.secret"], live.questions, async (ask) => {
          const record = await options.getQuestion?.(ask.id);
          return record ? questionEnd(ask, record) : null;
        }),
        broker.reconcile(["gateway.plugin-approval"], live.pluginApprovals),
        broker.reconcile(["gateway.exec-approval"], live.execApprovals),
      ]);
      // Text prompts are not listed by the Gateway; their own timeout still ends them.
      broker.confirm(["gateway.question", "gateway.secret", "gateway.plugin-approval", "gateway.exec-approval", "text-prompt"]);
    },
    status(status) {
      options.onStatus(status);
    },
  };
}
