import type { QuestionRecord } from "@openclaw/gateway-protocol";
import type { ApprovalAsk, ApprovalScope, Ask, AskQuestion, Decision, Severity } from "../ask.ts";
import { assessCommand, commandHeadline } from "../command-risk.ts";
import { commandConsequence, runCommandDescription, runCommandTitle } from "../wording.ts";

/**
 * Pure converters from Gateway records to Asks. The Gateway adapter (server/gateway) validates every
 * record before it gets here: question records with the protocol package's schema, approval events
 * with its own (the package publishes none for them).
 */

export const APPROVAL_DETAIL_LIMIT = 600;

/**
 * Where the ask belongs, from its session key: the chat, and the reply whose widget its summary stays
 * in when the key names one (the `/v1` keys of the Open WebUI filter do; the Pipe's do not).
 */
export type AskContext = { chatId: string | null; replyId: string | null; agentId: string };

/** The reply of a key that names one, as the Ask's `replyId` (absent otherwise). */
export function replyOf(context: { replyId: string | null }): { replyId?: string } {
  return context.replyId === null ? {} : { replyId: context.replyId };
}

export function askFromQuestionRecord(record: QuestionRecord, context: AskContext): Ask {
  const base = {
    id: record.id,
    chatId: context.chatId,
    sessionKey: record.sessionKey ?? "",
    agentId: record.agentId ?? context.agentId,
    runId: record.runId ?? null,
    createdAt: record.createdAtMs,
    expiresAt: record.expiresAtMs,
    status: "pending" as const,
    resolution: null,
    ...replyOf(context),
  };
  const secretQuestion = record.questions.find(
    (question) => question.isSecret === true || question.secretStore !== undefined,
  );
  if (secretQuestion) {
    const store = secretQuestion.secretStore;
    return {
      ...base,
      kind: "secret",
      source: "gateway.secret",
      secret: {
        questionId: secretQuestion.questionId,
        name: store?.name,
        reason: store?.reason,
        allowedHosts: store?.allowedHosts,
        // `question.resolve` takes `secretStoreAllowedHosts` only for store-bound secrets.
        allowedHostsEditable: store !== undefined,
        prompt: secretQuestion.question,
      },
    };
  }
  const questions: AskQuestion[] = record.questions.map((question) => ({
    id: question.questionId,
    header: question.header,
    question: question.question,
    options: question.options.map((option) =>
      option.description
        ? { label: option.label, description: option.description }
        : { label: option.label },
    ),
    multiSelect: question.multiSelect === true,
    allowOther: question.isOther === true,
  }));
  return { ...base, kind: "question", source: "gateway.question", questions };
}

type Nullable<T> = T | null | undefined;

/** The part of an approval request event the converters read (the Gateway adapter validates it). */
type ApprovalEvent<Request> = {
  id: string;
  createdAtMs: number;
  expiresAtMs: number;
  request: Request & {
    agentId?: Nullable<string>;
    sessionKey?: Nullable<string>;
    runId?: Nullable<string>;
    allowedDecisions?: Nullable<Decision[]>;
    scope?: Nullable<ApprovalScope>;
  };
};

export type PluginApprovalRecord = ApprovalEvent<{
  pluginId?: Nullable<string>;
  title: string;
  description: string;
  detail?: Nullable<string>;
  severity?: Nullable<Severity>;
  toolName?: Nullable<string>;
}>;

export type ExecApprovalRecord = ApprovalEvent<{
  command: string;
  cwd?: Nullable<string>;
  host?: Nullable<string>;
  warningText?: Nullable<string>;
  commandAnalysis?: Nullable<{ riskKinds?: Nullable<string[]>; warningLines?: Nullable<string[]> }>;
  unavailableDecisions?: Nullable<string[]>;
}>;

/** Deny first, so the card's recommended (first) choice is the safe one. */
const DECISION_ORDER: readonly Decision[] = ["deny", "allow-once", "allow-always"];

export function orderDecisions(
  allowed: readonly Decision[] | null | undefined,
  unavailable: readonly string[] = [],
): Decision[] {
  const offered = allowed && allowed.length > 0 ? allowed : DECISION_ORDER;
  return DECISION_ORDER.filter(
    (decision) => offered.includes(decision) && !unavailable.includes(decision),
  );
}

function clip(text: string | null | undefined, limit: number): string | undefined {
  if (!text) return undefined;
  return text.length > limit ? text.slice(0, limit) : text;
}

function approvalAsk(
  event: ApprovalEvent<object>,
  source: ApprovalAsk["source"],
  approval: ApprovalAsk["approval"],
  context: AskContext,
): ApprovalAsk {
  return {
    id: event.id,
    kind: "approval",
    source,
    chatId: context.chatId,
    sessionKey: event.request.sessionKey ?? "",
    agentId: event.request.agentId ?? context.agentId,
    runId: event.request.runId ?? null,
    createdAt: event.createdAtMs,
    expiresAt: event.expiresAtMs,
    status: "pending",
    resolution: null,
    ...replyOf(context),
    approval,
  };
}

export function askFromPluginApproval(
  event: PluginApprovalRecord,
  context: AskContext,
): ApprovalAsk {
  const { request } = event;
  return approvalAsk(
    event,
    "gateway.plugin-approval",
    {
      title: request.title,
      description: request.description,
      detail: clip(request.detail, APPROVAL_DETAIL_LIMIT),
      severity: request.severity ?? "warning",
      toolName: request.toolName ?? undefined,
      pluginId: request.pluginId ?? undefined,
      scope: request.scope ?? undefined,
      decisions: orderDecisions(request.allowedDecisions),
    },
    context,
  );
}

export function askFromExecApproval(event: ExecApprovalRecord, context: AskContext): ApprovalAsk {
  const { request } = event;
  // Live records carry `warningText: null` and put the Gateway's own findings in `commandAnalysis`.
  const warnings = request.warningText || (request.commandAnalysis?.warningLines ?? []).join("\n");
  // The Gateway sends no severity for a command: read it from the command itself.
  const assessed = assessCommand(request.command);
  const consequence = commandConsequence(assessed.risks);
  return approvalAsk(
    event,
    "gateway.exec-approval",
    {
      title: runCommandTitle(commandHeadline(request.command)),
      description: runCommandDescription(request, consequence),
      detail: clip(warnings, APPROVAL_DETAIL_LIMIT),
      severity: assessed.severity,
      command: request.command,
      scope: request.scope ?? undefined,
      decisions: orderDecisions(request.allowedDecisions, request.unavailableDecisions ?? []),
    },
    context,
  );
}
