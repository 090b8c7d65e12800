import { type KeyboardEvent, useEffect, useId, useRef, useState } from "react";
import type { AskQuestion, QuestionAsk } from "../../lib/ask.ts";
import { questionHeading } from "../../lib/wording.ts";
import { AskOrigin } from "./AskOrigin.tsx";
import { cx, textDirection } from "./format.ts";
import {
  buildAnswer,
  CONFIRM_NO,
  CONFIRM_YES,
  confirmAnswer,
  type Draft,
  EMPTY_DRAFT,
  isPicked,
  pickOption,
  questionMode,
} from "./question-model.ts";
import { QuestionFields } from "./QuestionFields.tsx";
import { QuestionStepper } from "./QuestionStepper.tsx";
import {
  card,
  cardFocus,
  errorText,
  eyebrow,
  ghostButton,
  muted,
  primaryButton,
  secondaryButton,
} from "./styles.ts";
import type { NumberPick, SubmitAnswer } from "./types.ts";
import { useNumberPick } from "./use-number-pick.ts";
import { useSendAnswer } from "./use-send-answer.ts";

// What reaches the Gateway: Skip and Cancel both decline the whole ask (`question.resolve` with `cancel: true`).
const CANCEL_HINT = "Cancel: the agent gets no answer and is told the question was cancelled";
const SKIP_HINT = "Skip: declines the question, the same as Cancel; the agent gets no answer";
const SKIP_ALL_HINT =
  "Skip: declines all the questions of this ask, the same as Cancel; the agent gets no answer to any of them";

type Props = {
  ask: QuestionAsk;
  onAnswer: SubmitAnswer;
  /** Move keyboard focus to the card when it appears (the widget); the dashboard lists many and does not. */
  autoFocus?: boolean;
  headingLevel?: 2 | 3;
  pick?: NumberPick;
};

/**
 * The question card (docs/ARCHITECTURE.md#user-interface): header, question, one row per option (the first Recommended), an
 * Other field when a typed answer is accepted, Skip / Cancel; 1-3 questions step with a stepper that
 * keeps each draft. Keys: 1-9 pick, arrows move, Enter submits (or goes to the next question), Esc cancels.
 */
export function QuestionCard({ ask, onAnswer, autoFocus = false, headingLevel = 2, pick }: Props) {
  const total = ask.questions.length;
  const [step, setStep] = useState(0);
  const [drafts, setDrafts] = useState<Record<string, Draft>>({});
  const { busy, error, setError, send } = useSendAnswer(onAnswer);
  const rootRef = useRef<HTMLFormElement>(null);
  const focusRootAfterStep = useRef(false);
  const baseId = useId();

  const index = Math.min(step, total - 1);
  const question = ask.questions[index] as AskQuestion;
  const mode = questionMode(ask, question);
  const draft = drafts[question.id] ?? EMPTY_DRAFT;
  const dir = textDirection(question.header, question.question, question.options[0]?.label);
  const Heading = headingLevel === 2 ? "h2" : "h3";
  const headingId = `${baseId}-heading`;
  const last = index === total - 1;

  useEffect(() => {
    if (autoFocus) rootRef.current?.focus();
  }, [autoFocus]);

  useEffect(() => {
    if (!focusRootAfterStep.current) return;
    focusRootAfterStep.current = false;
    rootRef.current?.focus();
  }, [step]);

  const update = (next: Draft) => {
    setDrafts((current) => ({ ...current, [question.id]: next }));
    setError(null);
  };

  const goTo = (target: number) => {
    if (target < 0 || target >= total) return;
    focusRootAfterStep.current = true;
    setError(null);
    setStep(target);
  };

  const submit = () => {
    if (busy) return;
    if (!last) {
      goTo(index + 1);
      return;
    }
    const built = buildAnswer(ask, drafts);
    if (!built.ok) {
      if (built.missing !== index) goTo(built.missing);
      setError(
        total > 1
          ? `Question ${built.missing + 1} needs an answer.`
          : "Choose an option or type an answer.",
      );
      return;
    }
    void send(built.answer);
  };

  const cancel = () => void send({ type: "cancel" });

  const focusOption = (optionIndex: number) => {
    rootRef.current?.querySelector<HTMLElement>(`[data-option="${optionIndex}"]`)?.focus();
  };

  /** A number picks that option (and focuses it); a yes/no question is answered, 1 yes, 2 no. True when it was taken. */
  const pressNumber = (digit: number): boolean => {
    if (mode === "confirm") {
      if (digit !== 1 && digit !== 2) return false;
      void send(confirmAnswer(ask, digit === 1));
      return true;
    }
    const picked = digit - 1;
    if (picked >= question.options.length) return false;
    update(pickOption(question, mode, draft, picked));
    focusOption(picked);
    return true;
  };

  useNumberPick(pick, rootRef, (digit) => {
    if (!busy) pressNumber(digit);
  });

  const onKeyDown = (event: KeyboardEvent<HTMLFormElement>) => {
    if (busy || event.altKey || event.ctrlKey || event.metaKey) return;
    const target = event.target as HTMLElement;
    const typing =
      target instanceof HTMLTextAreaElement ||
      (target instanceof HTMLInputElement && target.type !== "radio" && target.type !== "checkbox");
    if (event.key === "Escape") {
      event.preventDefault();
      cancel();
      return;
    }
    if (typing) {
      if (event.key === "Enter" && !event.shiftKey) {
        event.preventDefault();
        submit();
      }
      return;
    }
    // In a yes/no question y and n say the same as 1 and 2.
    const key = event.key.toLowerCase();
    const digit =
      mode === "confirm" && (key === "y" || key === "n")
        ? key === "y"
          ? 1
          : 2
        : /^[1-9]$/.test(key)
          ? Number(key)
          : null;
    if (digit !== null) {
      if (pressNumber(digit)) event.preventDefault();
      return;
    }
    if (mode === "confirm") return;
    const forward =
      event.key === "ArrowDown" || event.key === (dir === "rtl" ? "ArrowLeft" : "ArrowRight");
    const backward =
      event.key === "ArrowUp" || event.key === (dir === "rtl" ? "ArrowRight" : "ArrowLeft");
    if ((forward || backward) && question.options.length > 0) {
      event.preventDefault();
      const count = question.options.length;
      const focused = target.dataset.option !== undefined ? Number(target.dataset.option) : -1;
      const current =
        focused >= 0
          ? focused
          : question.options.findIndex((_, i) => isPicked(question, mode, draft, i));
      const next =
        current < 0 ? (forward ? 0 : count - 1) : (current + (forward ? 1 : count - 1)) % count;
      if (mode === "choice" && !question.multiSelect)
        update(pickOption(question, mode, draft, next));
      focusOption(next);
      return;
    }
    if (
      event.key === "Enter" &&
      !(target instanceof HTMLButtonElement) &&
      !(target instanceof HTMLAnchorElement)
    ) {
      event.preventDefault();
      submit();
    }
  };

  return (
    <form
      ref={rootRef}
      tabIndex={-1}
      dir={dir}
      aria-labelledby={headingId}
      aria-busy={busy || undefined}
      data-ask-id={ask.id}
      className={cx(card, cardFocus)}
      onKeyDown={onKeyDown}
      onSubmit={(event) => {
        event.preventDefault();
        submit();
      }}
    >
      {total > 1 && <QuestionStepper ask={ask} drafts={drafts} current={index} onGo={goTo} />}

      <div className="mb-3">
        {question.header && total === 1 && (
          <p className={eyebrow} dir="auto">
            {question.header}
          </p>
        )}
        <Heading
          id={headingId}
          className="mt-1 text-base leading-snug font-semibold whitespace-pre-line sm:text-lg"
          dir="auto"
        >
          {questionHeading(question)}
        </Heading>
        <AskOrigin ask={ask} />
        {total > 1 && (
          <p className={cx("mt-1 text-xs", muted)}>
            Question {index + 1} of {total}
          </p>
        )}
      </div>

      {mode === "confirm" ? (
        <div className="flex flex-wrap gap-2" role="group" aria-label="Answer">
          <button
            type="button"
            className={primaryButton}
            disabled={busy}
            onClick={() => void send(confirmAnswer(ask, true))}
          >
            {CONFIRM_YES}
          </button>
          <button
            type="button"
            className={secondaryButton}
            disabled={busy}
            onClick={() => void send(confirmAnswer(ask, false))}
          >
            {CONFIRM_NO}
          </button>
        </div>
      ) : (
        <QuestionFields
          key={question.id}
          baseId={`${baseId}-${index}`}
          question={question}
          mode={mode}
          draft={draft}
          busy={busy}
          onChange={update}
        />
      )}

      {error && (
        <p role="alert" className={cx("mt-3", errorText)}>
          {error}
        </p>
      )}

      <div className="mt-4 flex flex-wrap items-center justify-end gap-2">
        {/* Both send the Gateway the same `cancel: true` for the whole ask: its question reply has no per-question skip (docs/PROTOCOL.md#client--server). */}
        <button
          type="button"
          className={ghostButton}
          disabled={busy}
          onClick={cancel}
          title={CANCEL_HINT}
        >
          Cancel
        </button>
        <button
          type="button"
          className={ghostButton}
          disabled={busy}
          onClick={cancel}
          title={total > 1 ? SKIP_ALL_HINT : SKIP_HINT}
        >
          Skip
        </button>
        {index > 0 && (
          <button
            type="button"
            className={secondaryButton}
            disabled={busy}
            onClick={() => goTo(index - 1)}
          >
            Back
          </button>
        )}
        {mode !== "confirm" &&
          (last ? (
            <button type="submit" className={primaryButton} disabled={busy}>
              {busy ? "Sending…" : "Submit"}
            </button>
          ) : (
            <button type="submit" className={primaryButton} disabled={busy}>
              Next
            </button>
          ))}
      </div>
    </form>
  );
}
