import type { TSchema } from "typebox";
import { Compile } from "typebox/compile";
import {
  ChatEventSchema,
  QuestionRecordSchema,
  QuestionResolvedEventSchema,
  type ChatEvent,
  type QuestionRecord,
  type QuestionResolvedEvent,
} from "@openclaw/gateway-protocol";
import { z } from "zod";
import {
  ApprovalResolved,
  ExecApprovalRequested,
  PluginApprovalRequested,
} from "../../lib/sources/gateway.ts";

/**
 * Boundary checks for everything the Gateway sends: the protocol package's own schemas where it
 * publishes one, and this service's zod schemas for approval events (the package has none for them).
 */

type Check<T> = (value: unknown) => { ok: true; value: T } | { ok: false; error: string };

function fromTypebox<T>(schema: TSchema): Check<T> {
  const validator = Compile(schema);
  return (value) => {
    if (validator.Check(value)) return { ok: true, value: value as T };
    const first = [...validator.Errors(value)].slice(0, 3);
    return { ok: false, error: first.map((error) => `${error.instancePath || "/"} ${error.message}`).join("; ") };
  };
}

function fromZod<T>(schema: z.ZodType<T>): Check<T> {
  return (value) => {
    const result = schema.safeParse(value);
    return result.success ? { ok: true, value: result.data } : { ok: false, error: result.error.issues[0]?.message ?? "invalid" };
  };
}

export const checkQuestionRecord = fromTypebox<QuestionRecord>(QuestionRecordSchema);
export const checkQuestionResolved = fromTypebox<QuestionResolvedEvent>(QuestionResolvedEventSchema);
export const checkChatEvent = fromTypebox<ChatEvent>(ChatEventSchema);
export const checkPluginApproval = fromZod(PluginApprovalRequested);
export const checkExecApproval = fromZod(ExecApprovalRequested);
export const checkApprovalResolved = fromZod(ApprovalResolved);
export const checkApprovalList = fromZod(z.array(z.unknown()));
