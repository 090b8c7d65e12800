import type { AskQuestion, QuestionAsk } from "../../lib/ask.ts";
import { CONFIRM_OPTIONS } from "../../lib/prompts/types.ts";
import type { TabAnswer } from "../../lib/protocol.ts";

/**
 * The QuestionCard's state and the answer it sends, kept pure so it is unit-tested without a DOM.
 *
 * Modes of one question:
 * - `choice`: one row per option (radios, or checkboxes for multi-select), plus an Other field when the
 *   question accepts a typed answer;
 * - `typed-multi`: a text prompt's multi-select: the options listed by number, answered by typing
 *   (`1, 3`, names, or both); the server maps what was typed (docs/ARCHITECTURE.md#text-prompts);
 * - `confirm`: a text prompt's yes/no question: Yes / No buttons;
 * - `text`: no options: a typed answer.
 */

export type QuestionMode = "choice" | "typed-multi" | "confirm" | "text";

export type Draft = {
  /** Picked option labels, in option order. */
  selected: string[];
  /** The typed text (Other, or the whole answer for `text` / `typed-multi`). */
  other: string;
  /** Single choice: the typed Other answer is the one chosen (typing in Other un-picks the options). */
  useOther: boolean;
};

export const EMPTY_DRAFT: Draft = { selected: [], other: "", useOther: false };

export function questionMode(ask: QuestionAsk, question: AskQuestion): QuestionMode {
  if (ask.textPrompt?.form === "confirm") return "confirm";
  if (question.options.length === 0) return "text";
  if (ask.source === "text-prompt" && question.multiSelect) return "typed-multi";
  return "choice";
}

/** The Other field exists for choice questions that take a typed answer; text questions are all typed. */
export function hasTypedField(question: AskQuestion, mode: QuestionMode): boolean {
  if (mode === "text" || mode === "typed-multi") return true;
  return mode === "choice" && question.allowOther;
}

/** Options whose label already says it (`Postgres (Recommended)`) get no second tag. */
export function isRecommended(question: AskQuestion, index: number): boolean {
  return (
    index === 0 &&
    question.options.length > 1 &&
    !/recommended/i.test(question.options[0]?.label ?? "")
  );
}

/** Picks (or toggles, for multi-select) option `index`. */
export function pickOption(
  question: AskQuestion,
  mode: QuestionMode,
  draft: Draft,
  index: number,
): Draft {
  const option = question.options[index];
  if (!option) return draft;
  if (mode === "typed-multi") return { ...draft, other: toggleTypedNumber(draft.other, index + 1) };
  if (!question.multiSelect) return { ...draft, selected: [option.label], useOther: false };
  const picked = new Set(draft.selected);
  if (picked.has(option.label)) picked.delete(option.label);
  else picked.add(option.label);
  return {
    ...draft,
    selected: question.options.map((o) => o.label).filter((label) => picked.has(label)),
  };
}

export function typeOther(
  question: AskQuestion,
  mode: QuestionMode,
  draft: Draft,
  text: string,
): Draft {
  if (mode === "choice" && !question.multiSelect) {
    const useOther = text.trim() !== "";
    return { selected: useOther ? [] : draft.selected, other: text, useOther };
  }
  return { ...draft, other: text };
}

/** Is option `index` picked (for typed multi-select: named by its number or label in the text)? */
export function isPicked(
  question: AskQuestion,
  mode: QuestionMode,
  draft: Draft,
  index: number,
): boolean {
  const option = question.options[index];
  if (!option) return false;
  if (mode === "typed-multi") {
    const tokens = typedTokens(draft.other).map((token) => token.toLowerCase());
    return (
      tokens.includes(String(index + 1)) ||
      draft.other
        .toLowerCase()
        .split(",")
        .map((part) => part.trim())
        .includes(option.label.toLowerCase())
    );
  }
  return draft.selected.includes(option.label);
}

/** The values this draft answers with; empty when it has no answer yet. */
export function draftValues(question: AskQuestion, mode: QuestionMode, draft: Draft): string[] {
  const typed = draft.other.trim();
  switch (mode) {
    case "text":
    case "typed-multi":
    case "confirm":
      return typed ? [typed] : [];
    case "choice":
      if (!question.multiSelect)
        return draft.useOther && typed && question.allowOther
          ? [typed]
          : draft.selected.slice(0, 1);
      return question.allowOther && typed ? [...draft.selected, typed] : [...draft.selected];
  }
}

export type BuiltAnswer = { ok: true; answer: TabAnswer } | { ok: false; missing: number };

/**
 * Every question must have an answer (the Gateway refuses partial answers; Skip declines the record).
 * A text prompt's typed multi-select goes as typed text, which the server maps to option labels.
 */
export function buildAnswer(
  ask: QuestionAsk,
  drafts: Readonly<Record<string, Draft>>,
): BuiltAnswer {
  const answers: Record<string, string[]> = {};
  for (const [index, question] of ask.questions.entries()) {
    const mode = questionMode(ask, question);
    const values = draftValues(question, mode, drafts[question.id] ?? EMPTY_DRAFT);
    if (values.length === 0) return { ok: false, missing: index };
    if (ask.questions.length === 1 && mode === "typed-multi")
      return { ok: true, answer: { type: "text", text: values[0] ?? "" } };
    answers[question.id] = values;
  }
  return { ok: true, answer: { type: "questions", answers } };
}

/** The words of a confirmation's two buttons, as the text-prompt classifier offers them. */
export const [CONFIRM_YES, CONFIRM_NO] = CONFIRM_OPTIONS.map((option) => option.label) as [
  string,
  string,
];

/** Yes / No on a confirmation: the matching option's own label when the card has one, else the word. */
export function confirmAnswer(ask: QuestionAsk, yes: boolean): TabAnswer {
  const question = ask.questions[0];
  const word = yes ? CONFIRM_YES : CONFIRM_NO;
  const option = question?.options.find((o) => o.label.trim().toLowerCase() === word.toLowerCase());
  if (question && option) return { type: "questions", answers: { [question.id]: [option.label] } };
  return { type: "text", text: word };
}

function typedTokens(text: string): string[] {
  return text.split(/[,\s]+/).filter(Boolean);
}

/** Adds or removes an option number in a typed multi-select answer: `1, 3` + 2 → `1, 2, 3`. */
export function toggleTypedNumber(text: string, number: number): string {
  const tokens = typedTokens(text);
  const key = String(number);
  const next = tokens.includes(key) ? tokens.filter((token) => token !== key) : [...tokens, key];
  if (next.every((token) => /^\d+$/.test(token))) next.sort((a, b) => Number(a) - Number(b));
  return next.join(", ");
}
