import type {
  ApprovalAsk,
  Ask,
  AskQuestion,
  AskStatus,
  Decision,
  QuestionAsk,
  SecretAsk,
} from "./ask.ts";
import { SECRET_CANCELLED_SUMMARY, SECRET_ENTERED_SUMMARY } from "./outcomes.ts";
import { resolveChoiceAnswer } from "./prompts/index.ts";
import type { ErrorCode, TabAnswer } from "./protocol.ts";
import { DECISION_LABELS, STATUS_LABELS } from "./wording.ts";

/**
 * Maps a tab's answer to the reply the ask's source is given (docs/ARCHITECTURE.md#sources-and-answers), or refuses it with the
 * reason. Pure, and in domain terms: the Gateway adapter turns a reply into its method call. A secret
 * value only ever lives in the returned reply.
 */

export type AskReply =
  /** The answers by question id (a secret: its one question), and a secret's edited allowed hosts. */
  | { type: "answers"; answers: Record<string, string[]>; allowedHosts?: string[] }
  | { type: "cancel" }
  | { type: "decision"; decision: Decision }
  /** A text prompt: the run continues with this as the session's next user message. */
  | { type: "message"; text: string };

export type MappedAnswer = {
  ok: true;
  /** What the source is told; null when nothing needs to reach it (a text prompt left as text). */
  reply: AskReply | null;
  /**
   * A text prompt of a `/v1` reply: the answer continues the chat as the person's next message, which
   * the widget hands to Open WebUI (the source is told nothing).
   */
  chatMessage?: string;
  status: Exclude<AskStatus, "pending">;
  summary: string;
};
export type RefusedAnswer = { ok: false; code: ErrorCode; message: string };

/** What the agent is told when a text-prompt secret dialog is cancelled or never answered. */
export const SECRET_CANCELLED_MESSAGE = "I cancelled the secret request; nothing was entered.";
export const SECRET_NOT_RECEIVED_MESSAGE =
  "No secret was received: the request timed out or no tab had the chat open. Ask again when I am back, or use masked credential entry.";
/**
 * The person's next message when a `/v1` reply asked for a secret in its text: typed into the chat it
 * would be stored there and sent to the model, so the agent is asked for masked entry instead.
 */
export const SECRET_MASKED_ENTRY_MESSAGE =
  "I won't type a secret into the chat: it would be stored there. Please ask for it with your secrets tool (masked entry).";
export const SECRET_MASKED_ENTRY_SUMMARY = "Nothing entered: masked entry asked for";

export function mapAnswer(ask: Ask, answer: TabAnswer): MappedAnswer | RefusedAnswer {
  if (ask.source === "text-prompt") return mapTextPromptAnswer(ask, answer);
  switch (ask.kind) {
    case "question":
      return mapQuestionAnswer(ask, answer);
    case "secret":
      return mapSecretAnswer(ask, answer);
    case "approval":
      return mapApprovalAnswer(ask, answer);
  }
}

function refuse(message: string): RefusedAnswer {
  return { ok: false, code: "INVALID", message };
}

function mapQuestionAnswer(ask: QuestionAsk, answer: TabAnswer): MappedAnswer | RefusedAnswer {
  if (answer.type === "cancel") {
    return {
      ok: true,
      reply: { type: "cancel" },
      status: "cancelled",
      summary: STATUS_LABELS.cancelled,
    };
  }
  let raw: Record<string, string[]>;
  if (answer.type === "questions") {
    raw = answer.answers;
  } else if (answer.type === "text") {
    const [only] = ask.questions;
    if (ask.questions.length !== 1 || !only)
      return refuse('a typed answer needs a single-question card; send type "questions"');
    raw = { [only.id]: [answer.text] };
  } else {
    return refuse(
      `a question takes a "questions", "text" or "cancel" answer, not "${answer.type}"`,
    );
  }
  const answers: Record<string, string[]> = {};
  for (const question of ask.questions) {
    const values = normaliseValues(question, raw[question.id] ?? []);
    if (typeof values === "string") return refuse(values);
    answers[question.id] = values;
  }
  const unknown = Object.keys(raw).filter(
    (id) => !ask.questions.some((question) => question.id === id),
  );
  if (unknown.length > 0) return refuse(`unknown question id: ${unknown.join(", ")}`);
  return {
    ok: true,
    reply: { type: "answers", answers },
    status: "answered",
    summary: summariseAnswers(ask.questions, answers),
  };
}

/** Trims, maps option numbers to labels, and checks the Gateway's own rules before it refuses them. */
function normaliseValues(question: AskQuestion, values: string[]): string[] | string {
  const picked: string[] = [];
  for (const value of values) {
    const text = value.trim();
    if (!text) continue;
    const label = optionLabel(question, text);
    // A question without options is answered in words, as the Gateway accepts.
    if (label === null && !question.allowOther && question.options.length > 0)
      return `"${question.header || question.id}" accepts only its options`;
    const final = label ?? text;
    if (!picked.includes(final)) picked.push(final);
  }
  if (picked.length === 0) return `"${question.header || question.id}" needs an answer`;
  if (!question.multiSelect && picked.length > 1)
    return `"${question.header || question.id}" takes one answer`;
  return picked;
}

function optionLabel(question: AskQuestion, text: string): string | null {
  const byName = question.options.find(
    (option) => option.label.toLowerCase() === text.toLowerCase(),
  );
  if (byName) return byName.label;
  if (/^\d+$/.test(text)) return question.options[Number(text) - 1]?.label ?? null;
  return null;
}

function summariseAnswers(questions: AskQuestion[], answers: Record<string, string[]>): string {
  if (questions.length === 1 && questions[0]) return (answers[questions[0].id] ?? []).join(", ");
  return questions
    .map(
      (question) =>
        `${question.header || question.question}: ${(answers[question.id] ?? []).join(", ")}`,
    )
    .join("\n");
}

function mapSecretAnswer(ask: SecretAsk, answer: TabAnswer): MappedAnswer | RefusedAnswer {
  const questionId = ask.secret.questionId;
  if (!questionId) return refuse("this secret is not a Gateway question");
  if (answer.type === "cancel") {
    return {
      ok: true,
      reply: { type: "cancel" },
      status: "cancelled",
      summary: SECRET_CANCELLED_SUMMARY,
    };
  }
  if (answer.type !== "secret")
    return refuse(`a secret request takes a "secret" or "cancel" answer, not "${answer.type}"`);
  if (answer.allowedHosts && !ask.secret.allowedHostsEditable)
    return refuse("the allowed hosts of this secret cannot be changed");
  const reply: AskReply = { type: "answers", answers: { [questionId]: [answer.value] } };
  if (answer.allowedHosts) reply.allowedHosts = [...new Set(answer.allowedHosts)];
  return { ok: true, reply, status: "answered", summary: SECRET_ENTERED_SUMMARY };
}

function mapApprovalAnswer(ask: ApprovalAsk, answer: TabAnswer): MappedAnswer | RefusedAnswer {
  let decision: Decision;
  if (answer.type === "cancel") decision = "deny";
  else if (answer.type === "decision") decision = answer.decision;
  else return refuse(`an approval takes a "decision" or "cancel" answer, not "${answer.type}"`);
  if (!ask.approval.decisions.includes(decision))
    return refuse(`"${decision}" is not offered for this approval`);
  return {
    ok: true,
    reply: { type: "decision", decision },
    status: "answered",
    summary: DECISION_LABELS[decision],
  };
}

/**
 * A text prompt is answered by continuing the conversation: the answer becomes the session's next user
 * message (the Pipe's run continues), or the chat's (a `/v1` reply: the widget submits it in Open WebUI).
 */
function mapTextPromptAnswer(ask: Ask, answer: TabAnswer): MappedAnswer | RefusedAnswer {
  const inChat = ask.textPrompt?.continues === "chat";
  const continueWith = (text: string): Pick<MappedAnswer, "reply" | "chatMessage"> =>
    inChat ? { reply: null, chatMessage: text } : { reply: { type: "message", text } };
  const send = (text: string): AskReply => ({ type: "message", text });
  if (ask.kind === "secret" && inChat) {
    // A chat message would keep the value in Open WebUI's chat and send it to the model with every reply.
    if (answer.type === "cancel")
      return {
        ok: true,
        ...continueWith(SECRET_MASKED_ENTRY_MESSAGE),
        status: "cancelled",
        summary: SECRET_MASKED_ENTRY_SUMMARY,
      };
    return refuse(
      "this secret was asked for in the reply's text: typed here it would become a chat message, so ask the agent for masked entry instead",
    );
  }
  if (ask.kind === "secret") {
    if (answer.type === "cancel")
      return {
        ok: true,
        reply: send(SECRET_CANCELLED_MESSAGE),
        status: "cancelled",
        summary: SECRET_CANCELLED_SUMMARY,
      };
    if (answer.type !== "secret")
      return refuse(`a secret takes a "secret" or "cancel" answer, not "${answer.type}"`);
    if (answer.allowedHosts) return refuse("this secret has no allowed hosts to change");
    return {
      ok: true,
      reply: send(answer.value),
      status: "answered",
      summary: SECRET_ENTERED_SUMMARY,
    };
  }
  if (ask.kind !== "question") return refuse("text prompts are questions or secrets");
  // Cancelled prompts stay in the reply as text: nothing reaches the agent.
  if (answer.type === "cancel")
    return {
      ok: true,
      reply: null,
      status: "cancelled",
      summary: ask.textPrompt?.fallbackText ?? STATUS_LABELS.cancelled,
    };
  let raw: Record<string, string[]>;
  if (answer.type === "questions") raw = answer.answers;
  else if (answer.type === "text" && ask.questions.length === 1 && ask.questions[0])
    raw = { [ask.questions[0].id]: [answer.text] };
  else
    return refuse(
      `a question takes a "questions", "text" or "cancel" answer, not "${answer.type}"`,
    );
  const lines: string[] = [];
  for (const question of ask.questions) {
    const chosen = textPromptChoice(question, raw[question.id] ?? []);
    if (chosen === null) return refuse(`"${question.header || question.question}" needs an answer`);
    lines.push(
      ask.questions.length === 1 ? chosen : `${question.header || question.question}: ${chosen}`,
    );
  }
  const message = lines.join("\n");
  return { ok: true, ...continueWith(message), status: "answered", summary: message };
}

/** Picked labels pass as they are; a typed answer goes through the prompt's choice rules. */
function textPromptChoice(question: AskQuestion, values: string[]): string | null {
  const cleaned = values.map((value) => value.trim()).filter(Boolean);
  if (cleaned.length === 0) return null;
  const typed = cleaned.join(", ");
  if (!question.allowOther) {
    const label = optionLabel(question, typed);
    return label;
  }
  const resolved = resolveChoiceAnswer(typed, question.options, question.multiSelect);
  return resolved.trim() ? resolved : null;
}
