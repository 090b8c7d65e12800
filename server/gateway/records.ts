import {
  type ChatEvent,
  ChatEventSchema,
  type QuestionGetResult,
  QuestionGetResultSchema,
  type QuestionRecord,
  QuestionRecordSchema,
  type QuestionResolvedEvent,
  QuestionResolvedEventSchema,
} from "@openclaw/gateway-protocol";
import type { TSchema } from "typebox";
import { Compile } from "typebox/compile";
import { z } from "zod";
import { ApprovalScope, Decision, Severity } from "../../lib/ask.ts";
import type { ExecApprovalRecord, PluginApprovalRecord } from "../../lib/sources/gateway.ts";

/**
 * Boundary checks for everything the Gateway sends: the protocol package's own schemas where it
 * publishes one, and this service's zod schemas for approval events (the package has none for them:
 * these cover the part the converters in lib/sources read).
 */

const NullableString = z.string().nullish();
/** Display-only: an unreadable scope is dropped and the approval kept, as the Gateway itself does. */
const DisplayScope = ApprovalScope.nullish().catch(null);

const ApprovalEnvelope = z.object({
  id: z.string().min(1),
  createdAtMs: z.number().int().nonnegative(),
  expiresAtMs: z.number().int().nonnegative(),
});

/** What every approval request says about where it comes from and what may be decided. */
const ApprovalRequestCommon = {
  allowedDecisions: z.array(Decision).nullish(),
  scope: DisplayScope,
  agentId: NullableString,
  sessionKey: NullableString,
  runId: NullableString,
};

const PluginApprovalRequested = ApprovalEnvelope.extend({
  approvalKind: z.literal("plugin").optional(),
  request: z.looseObject({
    pluginId: NullableString,
    title: z.string().min(1),
    description: z.string(),
    detail: NullableString,
    severity: Severity.nullish(),
    toolName: NullableString,
    ...ApprovalRequestCommon,
  }),
});

const ExecApprovalRequested = ApprovalEnvelope.extend({
  approvalKind: z.literal("exec").optional(),
  request: z.looseObject({
    command: z.string().min(1),
    cwd: NullableString,
    host: NullableString,
    warningText: NullableString,
    commandAnalysis: z
      .looseObject({
        riskKinds: z.array(z.string()).nullish(),
        warningLines: z.array(z.string()).nullish(),
      })
      .nullish()
      .catch(null),
    unavailableDecisions: z.array(z.string()).nullish(),
    ...ApprovalRequestCommon,
  }),
});

const ApprovalResolved = z.object({
  id: z.string().min(1),
  decision: z.string().nullish(),
  resolvedBy: z.string().nullish(),
  ts: z.number().optional(),
});
export type ApprovalResolved = z.infer<typeof ApprovalResolved>;

export type Check<T> = (value: unknown) => { ok: true; value: T } | { ok: false; error: string };

function fromTypebox<T>(schema: TSchema): Check<T> {
  const validator = Compile(schema);
  return (value) => {
    if (validator.Check(value)) return { ok: true, value: value as T };
    const first = [...validator.Errors(value)].slice(0, 3);
    return {
      ok: false,
      error: first.map((error) => `${error.instancePath || "/"} ${error.message}`).join("; "),
    };
  };
}

function fromZod<T>(schema: z.ZodType<T>): Check<T> {
  return (value) => {
    const result = schema.safeParse(value);
    return result.success
      ? { ok: true, value: result.data }
      : { ok: false, error: result.error.issues[0]?.message ?? "invalid" };
  };
}

export const checkQuestionRecord = fromTypebox<QuestionRecord>(QuestionRecordSchema);
export const checkQuestionGetResult = fromTypebox<QuestionGetResult>(QuestionGetResultSchema);
export const checkQuestionResolved = fromTypebox<QuestionResolvedEvent>(
  QuestionResolvedEventSchema,
);
export const checkChatEvent = fromTypebox<ChatEvent>(ChatEventSchema);
export const checkPluginApproval: Check<PluginApprovalRecord> = fromZod(PluginApprovalRequested);
export const checkExecApproval: Check<ExecApprovalRecord> = fromZod(ExecApprovalRequested);
export const checkApprovalResolved = fromZod(ApprovalResolved);
export const checkApprovalList = fromZod(z.array(z.unknown()));
