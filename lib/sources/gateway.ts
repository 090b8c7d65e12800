import { z } from "zod";
import type { QuestionRecord } from "@openclaw/gateway-protocol";
import { ApprovalScope, Decision, Severity, type ApprovalAsk, type Ask, type AskQuestion } from "../ask.ts";

/**
 * Pure adapters from Gateway records to Asks. Question records are validated with the protocol
 * package's own schema by the gateway link before they get here; approval events have no published
 * schema, so the part of them this service reads is checked here.
 */

export const APPROVAL_DETAIL_LIMIT = 600;

export type AskContext = { chatId: string | null; agentId: string };

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
    shownTo: null,
    resolution: null,
  };
  const secretQuestion = record.questions.find((question) => question.isSecret === true || question.secretStore !== undefined);
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
      option.description ? { label: option.label, description: option.description } : { label: option.label },
    ),
    multiSelect: question.multiSelect === true,
    allowOther: question.isOther === true,
  }));
  return { ...base, kind: "question", source: "gateway.question", questions };
}

const NullableString = z.string().nullish();
/** Display-only: an unreadable scope is dropped and the approval kept, as the Gateway itself does. */
const DisplayScope = ApprovalScope.nullish().catch(null);

const ApprovalEnvelope = z.object({
  id: z.string().min(1),
  createdAtMs: z.number().int().nonnegative(),
  expiresAtMs: z.number().int().nonnegative(),
});

export const PluginApprovalRequested = ApprovalEnvelope.extend({
  approvalKind: z.literal("plugin").optional(),
  request: z.looseObject({
    pluginId: NullableString,
    title: z.string().min(1),
    description: z.string(),
    scope: DisplayScope,
    detail: NullableString,
    severity: Severity.nullish(),
    toolName: NullableString,
    allowedDecisions: z.array(Decision).nullish(),
    agentId: NullableString,
    sessionKey: NullableString,
    runId: NullableString,
  }),
});
export type PluginApprovalRequested = z.infer<typeof PluginApprovalRequested>;

export const ExecApprovalRequested = ApprovalEnvelope.extend({
  approvalKind: z.literal("exec").optional(),
  request: z.looseObject({
    command: z.string().min(1),
    cwd: NullableString,
    host: NullableString,
    warningText: NullableString,
    commandAnalysis: z
      .looseObject({ riskKinds: z.array(z.string()).nullish(), warningLines: z.array(z.string()).nullish() })
      .nullish()
      .catch(null),
    scope: DisplayScope,
    allowedDecisions: z.array(Decision).nullish(),
    unavailableDecisions: z.array(z.string()).nullish(),
    agentId: NullableString,
    sessionKey: NullableString,
    runId: NullableString,
  }),
});
export type ExecApprovalRequested = z.infer<typeof ExecApprovalRequested>;

export const ApprovalResolved = z.object({
  id: z.string().min(1),
  decision: z.string().nullish(),
  resolvedBy: z.string().nullish(),
  ts: z.number().optional(),
});
export type ApprovalResolved = z.infer<typeof ApprovalResolved>;

/** Deny first, so the card's recommended (first) choice is the safe one. */
const DECISION_ORDER: readonly Decision[] = ["deny", "allow-once", "allow-always"];

export function orderDecisions(allowed: readonly Decision[] | null | undefined, unavailable: readonly string[] = []): Decision[] {
  const offered = allowed && allowed.length > 0 ? allowed : DECISION_ORDER;
  return DECISION_ORDER.filter((decision) => offered.includes(decision) && !unavailable.includes(decision));
}

function clip(text: string | null | undefined, limit: number): string | undefined {
  if (!text) return undefined;
  return text.length > limit ? text.slice(0, limit) : text;
}

type ApprovalEvent = { id: string; createdAtMs: number; expiresAtMs: number; request: { agentId?: string | null; sessionKey?: string | null; runId?: string | null } };

function approvalAsk(event: ApprovalEvent, source: ApprovalAsk["source"], approval: ApprovalAsk["approval"], context: AskContext): ApprovalAsk {
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
    shownTo: null,
    resolution: null,
    approval,
  };
}

export function askFromPluginApproval(event: PluginApprovalRequested, context: AskContext): ApprovalAsk {
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

export function askFromExecApproval(event: ExecApprovalRequested, context: AskContext): ApprovalAsk {
  const { request } = event;
  const where = [request.host && `on ${request.host}`, request.cwd && `in ${request.cwd}`].filter(Boolean).join(" ");
  // Live records carry `warningText: null` and put the Gateway's own findings in `commandAnalysis`.
  const warnings = request.warningText || (request.commandAnalysis?.warningLines ?? []).join("\n");
  const risky = Boolean(warnings) || (request.commandAnalysis?.riskKinds ?? []).length > 0;
  return approvalAsk(
    event,
    "gateway.exec-approval",
    {
      title: "Run a command",
      description: where ? `The agent wants to run a command ${where}.` : "The agent wants to run a command.",
      detail: clip(warnings, APPROVAL_DETAIL_LIMIT),
      severity: risky ? "warning" : "info",
      command: request.command,
      scope: request.scope ?? undefined,
      decisions: orderDecisions(request.allowedDecisions, request.unavailableDecisions ?? []),
    },
    context,
  );
}

/**
 * The Gateway reports an approval's expiry as a `deny` nobody made, stamped at or after its deadline.
 */
export function isApprovalExpiry(resolved: ApprovalResolved, expiresAt: number | null): boolean {
  return (
    resolved.decision === "deny" &&
    (resolved.resolvedBy ?? null) === null &&
    expiresAt !== null &&
    resolved.ts !== undefined &&
    resolved.ts >= expiresAt
  );
}
