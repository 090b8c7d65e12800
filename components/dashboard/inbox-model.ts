import type { Ask, AskKind } from "../../lib/ask.ts";
import {
  ALLOWED,
  DECISION_LABELS,
  moreQuestions,
  questionHeading,
  SECRET_REQUESTED,
  STATUS_LABELS,
} from "../../lib/wording.ts";

/**
 * What the inbox shows of an ask in one row, and the history's filter. Pure, so both are tested
 * without a browser.
 */

/** A row's headline: the first question itself (a header is too terse to decide on), an approval's title, a secret's name. */
export function rowTitle(ask: Ask): string {
  switch (ask.kind) {
    case "question":
      return `${questionHeading(ask.questions[0])}${moreQuestions(ask.questions.length)}`;
    case "secret":
      return ask.secret.name
        ? `${ask.secret.name}: ${ask.secret.reason ?? ask.secret.prompt}`
        : ask.secret.prompt || SECRET_REQUESTED;
    case "approval":
      return ask.approval.title;
  }
}

/**
 * How a finished ask ended, as an owner looks for it: an approval's decision is told apart (allowed or
 * denied, by a person or by policy), everything else by its status.
 */
export type Outcome = "answered" | "allowed" | "denied" | "cancelled" | "expired" | "ended-as-text";

export const OUTCOME_LABELS: Record<Outcome, string> = {
  answered: STATUS_LABELS.answered,
  allowed: ALLOWED,
  denied: STATUS_LABELS.denied,
  cancelled: STATUS_LABELS.cancelled,
  expired: STATUS_LABELS.expired,
  "ended-as-text": STATUS_LABELS["ended-as-text"],
};

export function outcomeOf(ask: Ask): Outcome | null {
  if (ask.status === "pending") return null;
  if (ask.kind !== "approval" || ask.status !== "answered") return ask.status;
  // A decision's summary is its label, "(elsewhere)" added when it was made elsewhere (lib/answers.ts, the Gateway adapter).
  const summary = ask.resolution?.summary ?? "";
  if (summary.startsWith(DECISION_LABELS.deny)) return "denied";
  if (
    summary.startsWith(DECISION_LABELS["allow-once"]) ||
    summary.startsWith(DECISION_LABELS["allow-always"])
  )
    return "allowed";
  return "answered";
}

export type HistoryFilter = {
  kind: AskKind | "all";
  outcome: Outcome | "all";
  /** A chat id, `none` for asks of no chat, or `all`. */
  chat: string;
  /** Words that must all appear in the ask's questions or title (any case). */
  text: string;
};

export const NO_FILTER: HistoryFilter = { kind: "all", outcome: "all", chat: "all", text: "" };

/** The chat filter's value for asks that belong to no chat. */
export const NO_CHAT = "none";

/**
 * The text the search looks in: the questions (header, question, option labels), the titles and the
 * secret's name and prompt. Never an answer: a secret's value is not stored, so it cannot be found.
 */
export function searchableText(ask: Ask): string {
  switch (ask.kind) {
    case "question":
      return ask.questions
        .flatMap((question) => [
          question.header,
          question.question,
          ...question.options.map((option) => option.label),
        ])
        .join("\n");
    case "secret":
      return [ask.secret.name, ask.secret.reason, ask.secret.prompt].filter(Boolean).join("\n");
    case "approval":
      return [
        ask.approval.title,
        ask.approval.description,
        ask.approval.command,
        ask.approval.toolName,
      ]
        .filter(Boolean)
        .join("\n");
  }
}

export function matchesHistoryFilter(ask: Ask, filter: HistoryFilter): boolean {
  if (filter.kind !== "all" && ask.kind !== filter.kind) return false;
  if (filter.outcome !== "all" && outcomeOf(ask) !== filter.outcome) return false;
  if (filter.chat !== "all" && (ask.chatId ?? NO_CHAT) !== filter.chat) return false;
  const words = filter.text.toLocaleLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return true;
  const haystack = searchableText(ask).toLocaleLowerCase();
  return words.every((word) => haystack.includes(word));
}

/** The chats the history knows, for the chat filter: most recent activity first. */
export function historyChats(asks: readonly Ask[]): string[] {
  const chats: string[] = [];
  for (const ask of asks) {
    const chat = ask.chatId ?? NO_CHAT;
    if (!chats.includes(chat)) chats.push(chat);
  }
  return chats;
}
