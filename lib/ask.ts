import { z } from "zod";

/**
 * The Ask: one model for everything a person is asked (docs/ARCHITECTURE.md#the-ask).
 * These schemas are the single source of the types used by the server, the store and the browser.
 */

export const AskKind = z.enum(["question", "secret", "approval"]);
export type AskKind = z.infer<typeof AskKind>;

export const AskSource = z.enum([
  "gateway.question",
  "gateway.secret",
  "gateway.plugin-approval",
  "gateway.exec-approval",
  "text-prompt",
]);
export type AskSource = z.infer<typeof AskSource>;

export const AskStatus = z.enum([
  "pending",
  "answered",
  "cancelled",
  "expired",
  "denied",
  "ended-as-text",
]);
export type AskStatus = z.infer<typeof AskStatus>;

export const AskOption = z.object({
  label: z.string().min(1),
  description: z.string().optional(),
});
export type AskOption = z.infer<typeof AskOption>;

export const AskQuestion = z.object({
  id: z.string().min(1),
  header: z.string(),
  question: z.string(),
  /** The first option is the recommended one. */
  options: z.array(AskOption),
  multiSelect: z.boolean(),
  /** A typed answer is accepted (the Gateway's `isOther`); without it only option labels are. */
  allowOther: z.boolean(),
});
export type AskQuestion = z.infer<typeof AskQuestion>;

export const SecretRequest = z.object({
  /** The Gateway question that carries the value (absent for text prompts). */
  questionId: z.string().optional(),
  name: z.string().optional(),
  reason: z.string().optional(),
  allowedHosts: z.array(z.string()).optional(),
  /** The person may narrow or extend the hosts the secret may be sent to. */
  allowedHostsEditable: z.boolean(),
  prompt: z.string(),
});
export type SecretRequest = z.infer<typeof SecretRequest>;

export const Decision = z.enum(["allow-once", "allow-always", "deny"]);
export type Decision = z.infer<typeof Decision>;

export const Severity = z.enum(["info", "warning", "critical"]);
export type Severity = z.infer<typeof Severity>;

/**
 * What an approval would do, as the plugin (or, for automations, the Gateway) declares it: display-only
 * facts an owner decides on. Mirrors the Gateway's `ApprovalScope` (its bounds included).
 */
const ScopeText = (max: number) => z.string().min(1).max(max);
export const ApprovalScope = z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("message-send"),
    target: ScopeText(128),
    recipientCount: z.number().int().min(1),
    /** A preview: at most five of the recipients. */
    recipients: z.array(ScopeText(128)).max(5).optional(),
    audience: z.enum(["internal", "external"]).optional(),
  }),
  z.object({
    kind: z.literal("payment"),
    /** An exact decimal, as text ("49.99"). */
    amount: ScopeText(40),
    currency: ScopeText(12),
    target: ScopeText(128),
  }),
  z.object({
    kind: z.literal("external-post"),
    target: ScopeText(128),
    visibility: z.enum(["public", "restricted"]),
  }),
  z.object({
    /** Exec approvals of automations: what Always allow would grant. */
    kind: z.literal("standing-grant"),
    automation: ScopeText(128),
    command: ScopeText(256),
    expiresInDays: z.number().int().min(1).optional(),
  }),
]);
export type ApprovalScope = z.infer<typeof ApprovalScope>;

export const ApprovalRequest = z.object({
  title: z.string(),
  description: z.string(),
  /** At most the first 600 characters of the plugin's detail. */
  detail: z.string().optional(),
  severity: Severity,
  toolName: z.string().optional(),
  pluginId: z.string().optional(),
  command: z.string().optional(),
  scope: ApprovalScope.optional(),
  /** Always starts with `deny`: the card recommends the safe choice. */
  decisions: z.array(Decision).min(1),
});
export type ApprovalRequest = z.infer<typeof ApprovalRequest>;

export const Resolution = z.object({
  /** User id of the person who ended it, or null when it ended elsewhere or by policy/time. */
  by: z.string().nullable(),
  at: z.number(),
  /** Display text only: a secret's value never appears here. */
  summary: z.string(),
  /** The socket (tab) the answer came from, when it came from one. */
  tabId: z.string().nullable(),
});
export type Resolution = z.infer<typeof Resolution>;

/**
 * How a text prompt's answer reaches the agent: sent into the run's session, which continues (`run`:
 * the Pipe), or as the person's next message in the Open WebUI chat (`chat`: a reply on the
 * Gateway's `/v1` endpoint, whose HTTP client never reads a later run of its session).
 */
export const TextPromptContinuation = z.enum(["run", "chat"]);
export type TextPromptContinuation = z.infer<typeof TextPromptContinuation>;

/** A text prompt keeps its original text so it can end as plain reply text. */
export const TextPromptInfo = z.object({
  fallbackText: z.string(),
  /** The classified form: how a typed answer is mapped before it reaches the agent. */
  form: z.enum(["text", "confirm", "choice", "form", "secret"]),
  /** Rows stored before the `/v1` path were all the Pipe's. */
  continues: TextPromptContinuation.default("run"),
});
export type TextPromptInfo = z.infer<typeof TextPromptInfo>;

/**
 * Whose run raised the ask (docs/SECURITY.md#whose-run-asks), decided once when it arrives: every card,
 * inbox row and push names it, and the guest rules judge it (lib/policy.ts).
 */
export const AskOrigin = z.discriminatedUnion("kind", [
  /** A reply the Open WebUI filter announced (its signed reply start): the user who started it. */
  z.object({ kind: z.literal("reply"), userId: z.string().min(1), name: z.string().optional() }),
  /** A run on the Gateway's OpenAI-compatible endpoint that no reply start vouches for. */
  z.object({ kind: z.literal("unvouched") }),
  /** Any other session: the Gateway's own channels, its Control UI, the Pipe's chats (`channel` names it). */
  z.object({ kind: z.literal("session"), channel: z.string() }),
]);
export type AskOrigin = z.infer<typeof AskOrigin>;

const AskBase = z.object({
  id: z.string().min(1),
  source: AskSource,
  chatId: z.string().nullable(),
  sessionKey: z.string(),
  agentId: z.string(),
  runId: z.string().nullable(),
  createdAt: z.number(),
  expiresAt: z.number().nullable(),
  status: AskStatus,
  resolution: Resolution.nullable(),
  /**
   * The assistant message (an embed token's `msg`) whose widget showed the ask last: its summary
   * stays in that reply. Absent until a reply's widget shows it.
   */
  replyId: z.string().optional(),
  textPrompt: TextPromptInfo.optional(),
  /** Whose run asked; rows stored by earlier versions have none. */
  origin: AskOrigin.optional(),
});

export const QuestionAsk = AskBase.extend({
  kind: z.literal("question"),
  questions: z.array(AskQuestion).min(1).max(3),
});
export const SecretAsk = AskBase.extend({
  kind: z.literal("secret"),
  secret: SecretRequest,
});
export const ApprovalAsk = AskBase.extend({
  kind: z.literal("approval"),
  approval: ApprovalRequest,
});

export const Ask = z.discriminatedUnion("kind", [QuestionAsk, SecretAsk, ApprovalAsk]);
export type Ask = z.infer<typeof Ask>;
export type QuestionAsk = z.infer<typeof QuestionAsk>;
export type SecretAsk = z.infer<typeof SecretAsk>;
export type ApprovalAsk = z.infer<typeof ApprovalAsk>;

/** The ask as a reply's widget shows it: its summary stays in that reply from then on (no reply: as it is). */
export function inReply(ask: Ask, replyMsg: string | null): Ask {
  return replyMsg === null || ask.replyId === replyMsg ? ask : { ...ask, replyId: replyMsg };
}
