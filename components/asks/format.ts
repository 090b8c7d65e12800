import type { Ask, AskKind } from "../../lib/ask.ts";
import type { SecretOutcome } from "../../lib/protocol.ts";

/** Display helpers shared by the cards, the widget and the dashboard. Pure; no runtime imports from lib. */

export const KIND_LABELS: Record<AskKind, string> = {
  question: "Question",
  secret: "Secret",
  approval: "Approval",
};

// Hebrew, Arabic (with supplements and presentation forms), Syriac, Thaana, N'Ko.
const RTL_CHAR = /[\u0590-\u08FF\uFB1D-\uFDFF\uFE70-\uFEFF]/;
const LTR_CHAR = /[A-Za-z\u00C0-\u024F\u0370-\u03FF\u0400-\u04FF]/;

/** "rtl" when the first strong character of the text is right-to-left (Hebrew, Arabic), else "ltr". */
export function textDirection(...texts: (string | undefined | null)[]): "rtl" | "ltr" {
  for (const text of texts) {
    if (!text) continue;
    for (const char of text) {
      if (RTL_CHAR.test(char)) return "rtl";
      if (LTR_CHAR.test(char)) return "ltr";
    }
  }
  return "ltr";
}

/** The one line that names an ask in lists, summaries and notifications. */
export function askTitle(ask: Ask): string {
  switch (ask.kind) {
    case "question": {
      const first = ask.questions[0];
      const base = first ? first.header || first.question : "Question";
      return ask.questions.length > 1 ? `${base} (+${ask.questions.length - 1} more)` : base;
    }
    case "secret":
      return ask.secret.name || "Secret requested";
    case "approval":
      return ask.approval.title;
  }
}

/** The question text of an ask, for its ❓ Ask User record. */
export function askQuestionText(ask: Ask): string {
  switch (ask.kind) {
    case "question":
      return ask.questions.map((question) => question.question || question.header).join("\n");
    case "secret":
      return ask.secret.reason ? `${ask.secret.prompt}\n${ask.secret.reason}` : ask.secret.prompt;
    case "approval":
      return ask.approval.description ? `${ask.approval.title}: ${ask.approval.description}` : ask.approval.title;
  }
}

/** `1:05`, `12:00`, `1:02:03`: a countdown. */
export function formatCountdown(ms: number): string {
  const total = Math.max(0, Math.ceil(ms / 1000));
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = String(total % 60).padStart(2, "0");
  return hours > 0 ? `${hours}:${String(minutes).padStart(2, "0")}:${seconds}` : `${minutes}:${seconds}`;
}

/** `just now`, `40 s`, `3 min`, `2 h 5 min`, `3 d`: an age or a time left, in words. */
export function formatSpan(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 5) return "just now";
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return minutes % 60 ? `${hours} h ${minutes % 60} min` : `${hours} h`;
  return `${Math.floor(hours / 24)} d`;
}

export function formatTime(at: number): string {
  return new Date(at).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

/** Joins class names, skipping falsy ones. */
const SECRET_OUTCOME_TOASTS: Record<SecretOutcome, string> = {
  stored: "Secret stored",
  sent: "Secret sent to the agent",
  cancelled: "Secret request cancelled",
};

export function secretOutcomeToast(outcome: SecretOutcome): string {
  return SECRET_OUTCOME_TOASTS[outcome];
}

export function cx(...names: (string | false | null | undefined)[]): string {
  return names.filter(Boolean).join(" ");
}
