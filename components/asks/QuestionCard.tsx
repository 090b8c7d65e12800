import { type KeyboardEvent, useEffect, useId, useLayoutEffect, useRef, useState } from "react";
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
import {
  askCard,
  cardFocus,
  errorText,
  primaryButton,
  quietText,
  secondaryButton,
  smallButton,
  smallPrimaryButton,
} from "./styles.ts";
import type { NumberPick, SubmitAnswer } from "./types.ts";
import { useNumberPick } from "./use-number-pick.ts";
import { useSendAnswer } from "./use-send-answer.ts";

// What reaches the Gateway: Cancel declines the whole ask (`question.resolve` with `cancel: true`).
const CANCEL_HINT = "Cancel: the agent gets no answer and is told the question was cancelled";

type Props = {
  ask: QuestionAsk;
  onAnswer: SubmitAnswer;
  /** Move keyboard focus to the card when it appears (the widget); the dashboard lists many and does not. */
  autoFocus?: boolean;
  headingLevel?: 2 | 3;
  pick?: NumberPick;
};

/**
 * The question card (docs/ARCHITECTURE.md#user-interface), laid out as Open WebUI 0.12's own
 * (AskUserCard.svelte): the header, the question, one row per option (the first Recommended), an
 * Other row when a typed answer is accepted, Cancel / Previous and Next / Submit answers; 1-3
 * questions one at a time with "n/m", each draft kept. As there, clicking an option of a question
 * that is not the last goes on to the next, and Enter in Other goes on (or submits). Keys: 1-9 pick,
 * arrows move, Enter goes on or submits, Esc cancels.
 */
export function QuestionCard({ ask, onAnswer, autoFocus = false, headingLevel = 2, pick }: Props) {
  const total = ask.questions.length;
  const [step, setStep] = useState(0);
  const [drafts, setDrafts] = useState<Record<string, Draft>>({});
  const { busy, error, setError, send } = useSendAnswer(onAnswer);
  const rootRef = useRef<HTMLElement>(null);
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

  // Before the card is painted: a card shown by the server (not by a key) would otherwise be on screen
  // for a moment without the focus, and a key pressed then (Esc, a number) went to the page and was lost.
  useLayoutEffect(() => {
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

  const onKeyDown = (event: KeyboardEvent<HTMLElement>) => {
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

  /** A click on an option of a single choice goes on to the next question, as Open WebUI's card does. */
  const pickAndGoOn = (next: Draft) => {
    update(next);
    if (!last && mode === "choice" && !question.multiSelect) goTo(index + 1);
  };

  // No <form>: with Open WebUI's "Allow forms" off the frame's sandbox blocks submitting one, and
  // its submit event never fires (OPEN-WEBUI-0.12.md §1.3). Buttons and keys act by themselves.
  return (
    <section
      ref={rootRef}
      tabIndex={-1}
      dir={dir}
      aria-labelledby={headingId}
      aria-busy={busy || undefined}
      data-ask-id={ask.id}
      className={cx(askCard, cardFocus)}
      onKeyDown={onKeyDown}
    >
      <div className="mb-2">
        <div className="flex items-start justify-between gap-3">
          {question.header ? (
            <p className="min-w-0 text-sm font-medium break-words" dir="auto">
              {question.header}
            </p>
          ) : (
            <span />
          )}
          {total > 1 && (
            <p data-step className={cx("shrink-0 text-[0.6875rem] tabular-nums", quietText)}>
              <span aria-hidden="true">
                {index + 1}/{total}
              </span>
              <span className="sr-only">
                Question {index + 1} of {total}
              </span>
            </p>
          )}
        </div>
        <Heading
          id={headingId}
          className={cx(
            "leading-relaxed whitespace-pre-line",
            question.header ? cx("mt-0.5 text-xs font-normal", quietText) : "text-sm font-medium",
          )}
          dir="auto"
        >
          {questionHeading(question)}
        </Heading>
        <AskOrigin ask={ask} />
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
          onPick={pickAndGoOn}
        />
      )}

      {error && (
        <p role="alert" className={cx("mt-2", errorText)}>
          {error}
        </p>
      )}

      <div className="mt-2 flex flex-wrap items-center justify-between gap-2">
        <div className="flex items-center gap-1.5">
          <button
            type="button"
            className={smallButton}
            disabled={busy}
            onClick={cancel}
            title={CANCEL_HINT}
          >
            Cancel
          </button>
          {total > 1 && (
            <button
              type="button"
              className={smallButton}
              disabled={busy || index === 0}
              onClick={() => goTo(index - 1)}
            >
              Previous
            </button>
          )}
        </div>
        {mode !== "confirm" && (
          <button type="button" className={smallPrimaryButton} disabled={busy} onClick={submit}>
            {last ? (busy ? "Sending…" : "Submit answers") : "Next"}
          </button>
        )}
      </div>
    </section>
  );
}
