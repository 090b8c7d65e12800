import type { Ask, AskQuestion, TextPromptContinuation } from "../ask.ts";
import {
  classifyPrompt,
  CONFIRM_OPTIONS,
  promptFallbackText,
  type PromptSpec,
} from "../prompts/index.ts";
import { replyOf } from "./gateway.ts";

/**
 * A text prompt (`OpenClaw needs input:` in assistant text) becomes an Ask: a card for text, yes/no,
 * numbered choices and JSON forms, the masked dialog for a credential (docs/ARCHITECTURE.md#text-prompts).
 */

export type TextPromptOrigin = {
  /** Stable across replays of the same reply, so a prompt seen twice is one ask (the server hashes it). */
  id: string;
  sessionKey: string;
  runId: string;
  agentId: string;
  chatId: string | null;
  /** The reply its session key names (a `/v1` reply's), or null. */
  replyId: string | null;
  continues: TextPromptContinuation;
  now: number;
  timeoutMs: number;
};

export function askFromTextPrompt(prompt: string, origin: TextPromptOrigin): Ask {
  const spec = classifyPrompt(prompt);
  const base = {
    id: origin.id,
    source: "text-prompt" as const,
    chatId: origin.chatId,
    sessionKey: origin.sessionKey,
    agentId: origin.agentId,
    runId: origin.runId,
    createdAt: origin.now,
    expiresAt: origin.now + origin.timeoutMs,
    status: "pending" as const,
    resolution: null,
    ...replyOf(origin),
    textPrompt: {
      fallbackText: promptFallbackText(prompt),
      form: spec.kind,
      continues: origin.continues,
    },
  };
  if (spec.kind === "secret") {
    return {
      ...base,
      kind: "secret",
      secret: {
        name: spec.header || undefined,
        prompt: spec.question || spec.header,
        allowedHostsEditable: false,
      },
    };
  }
  return { ...base, kind: "question", questions: questionsOf(spec) };
}

function questionsOf(spec: PromptSpec): AskQuestion[] {
  if (spec.kind === "form") {
    return spec.questions.map((question, index) => ({
      id: `q${index + 1}`,
      header: question.header,
      question: question.question,
      options: question.options,
      multiSelect: question.multiSelect,
      allowOther: true,
    }));
  }
  const single = { id: "answer", header: spec.header, question: spec.question };
  if (spec.kind === "choice")
    return [{ ...single, options: spec.options, multiSelect: spec.multiSelect, allowOther: true }];
  if (spec.kind === "confirm")
    return [
      {
        ...single,
        options: CONFIRM_OPTIONS.map((option) => ({ ...option })),
        multiSelect: false,
        allowOther: false,
      },
    ];
  return [{ ...single, options: [], multiSelect: false, allowOther: true }];
}
