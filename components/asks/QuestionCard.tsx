import { useEffect, useId, useRef, useState, type KeyboardEvent } from "react";
import type { AskQuestion, QuestionAsk } from "../../lib/ask.ts";
import { cx, textDirection } from "./format.ts";
import {
  EMPTY_DRAFT,
  buildAnswer,
  confirmAnswer,
  draftValues,
  hasTypedField,
  isPicked,
  isRecommended,
  pickOption,
  questionMode,
  typeOther,
  type Draft,
  type QuestionMode,
} from "./question-model.ts";
import {
  card,
  cardFocus,
  errorText,
  eyebrow,
  ghostButton,
  muted,
  primaryButton,
  recommendedTag,
  secondaryButton,
  textInput,
} from "./styles.ts";
import type { SubmitAnswer } from "./types.ts";
import { useSendAnswer } from "./use-send-answer.ts";

type Props = {
  ask: QuestionAsk;
  onAnswer: SubmitAnswer;
  /** Move keyboard focus to the card when it appears (the widget); the dashboard lists many and does not. */
  autoFocus?: boolean;
  headingLevel?: 2 | 3;
};

/**
 * The question card (DESIGN §11): header, question, one row per option (the first Recommended), an
 * Other field when a typed answer is accepted, Skip / Cancel; 1-3 questions step with a stepper that
 * keeps each draft. Keys: 1-9 pick, arrows move, Enter submits (or goes to the next question), Esc cancels.
 */
export function QuestionCard({ ask, onAnswer, autoFocus = false, headingLevel = 2 }: Props) {
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
      setError(total > 1 ? `Question ${built.missing + 1} needs an answer.` : "Choose an option or type an answer.");
      return;
    }
    void send(built.answer);
  };

  const cancel = () => void send({ type: "cancel" });

  const focusOption = (optionIndex: number) => {
    rootRef.current?.querySelector<HTMLElement>(`[data-option="${optionIndex}"]`)?.focus();
  };

  const onKeyDown = (event: KeyboardEvent<HTMLFormElement>) => {
    if (busy || event.altKey || event.ctrlKey || event.metaKey) return;
    const target = event.target as HTMLElement;
    const typing =
      target instanceof HTMLTextAreaElement || (target instanceof HTMLInputElement && target.type !== "radio" && target.type !== "checkbox");
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
    if (mode === "confirm") {
      const key = event.key.toLowerCase();
      if (key === "y" || key === "1") {
        event.preventDefault();
        void send(confirmAnswer(ask, true));
      } else if (key === "n" || key === "2") {
        event.preventDefault();
        void send(confirmAnswer(ask, false));
      }
      return;
    }
    if (/^[1-9]$/.test(event.key)) {
      const picked = Number(event.key) - 1;
      if (picked < question.options.length) {
        event.preventDefault();
        update(pickOption(question, mode, draft, picked));
        focusOption(picked);
      }
      return;
    }
    const forward = event.key === "ArrowDown" || event.key === (dir === "rtl" ? "ArrowLeft" : "ArrowRight");
    const backward = event.key === "ArrowUp" || event.key === (dir === "rtl" ? "ArrowRight" : "ArrowLeft");
    if ((forward || backward) && question.options.length > 0) {
      event.preventDefault();
      const count = question.options.length;
      const focused = target.dataset.option !== undefined ? Number(target.dataset.option) : -1;
      const current = focused >= 0 ? focused : question.options.findIndex((_, i) => isPicked(question, mode, draft, i));
      const next = current < 0 ? (forward ? 0 : count - 1) : (current + (forward ? 1 : count - 1)) % count;
      if (mode === "choice" && !question.multiSelect) update(pickOption(question, mode, draft, next));
      focusOption(next);
      return;
    }
    if (event.key === "Enter" && !(target instanceof HTMLButtonElement) && !(target instanceof HTMLAnchorElement)) {
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
      {total > 1 && <Stepper ask={ask} drafts={drafts} current={index} onGo={goTo} />}

      <div className="mb-3">
        {question.header && total === 1 && (
          <p className={eyebrow} dir="auto">
            {question.header}
          </p>
        )}
        <Heading id={headingId} className="mt-1 text-base leading-snug font-semibold whitespace-pre-line sm:text-lg" dir="auto">
          {question.question || question.header || "The agent has a question"}
        </Heading>
        {total > 1 && (
          <p className={cx("mt-1 text-xs", muted)}>
            Question {index + 1} of {total}
          </p>
        )}
      </div>

      {mode === "confirm" ? (
        <div className="flex flex-wrap gap-2" role="group" aria-label="Answer">
          <button type="button" className={primaryButton} disabled={busy} onClick={() => void send(confirmAnswer(ask, true))}>
            Yes
          </button>
          <button type="button" className={secondaryButton} disabled={busy} onClick={() => void send(confirmAnswer(ask, false))}>
            No
          </button>
        </div>
      ) : (
        <QuestionBody
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
        <button type="button" className={ghostButton} disabled={busy} onClick={cancel} title="The agent is told you cancelled">
          Cancel
        </button>
        <button type="button" className={ghostButton} disabled={busy} onClick={cancel} title="Decline to answer; the agent is told you skipped">
          Skip
        </button>
        {index > 0 && (
          <button type="button" className={secondaryButton} disabled={busy} onClick={() => goTo(index - 1)}>
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

function Stepper({ ask, drafts, current, onGo }: { ask: QuestionAsk; drafts: Record<string, Draft>; current: number; onGo: (step: number) => void }) {
  return (
    <nav aria-label="Questions" className="mb-3">
      <ol className="flex gap-1.5">
        {ask.questions.map((question, i) => {
          const answered = draftValues(question, questionMode(ask, question), drafts[question.id] ?? EMPTY_DRAFT).length > 0;
          const name = question.header || question.question;
          return (
            <li key={question.id} className="min-w-0 flex-1">
              <button
                type="button"
                aria-current={i === current ? "step" : undefined}
                onClick={() => onGo(i)}
                className={cx(
                  "flex w-full min-w-0 items-center gap-1.5 rounded-md border-t-4 px-1 pt-1.5 pb-0.5 text-start text-xs",
                  i === current
                    ? "border-sky-600 font-semibold text-sky-900 dark:border-sky-400 dark:text-sky-100"
                    : answered
                      ? "border-emerald-600/70 text-zinc-700 dark:border-emerald-500/70 dark:text-zinc-300"
                      : "border-zinc-300 text-zinc-600 dark:border-zinc-600 dark:text-zinc-400",
                )}
              >
                <span className="sr-only">Question </span>
                <span className="shrink-0 tabular-nums">{i + 1}</span>
                <span className="sr-only">{` of ${ask.questions.length}: `}</span>
                <span className="truncate" dir="auto">
                  {name}
                </span>
                {answered && <span className="sr-only"> (answered)</span>}
                {answered && i !== current && (
                  <span aria-hidden="true" className="shrink-0 text-emerald-700 dark:text-emerald-400">
                    ✓
                  </span>
                )}
              </button>
            </li>
          );
        })}
      </ol>
    </nav>
  );
}

type BodyProps = {
  baseId: string;
  question: AskQuestion;
  mode: QuestionMode;
  draft: Draft;
  busy: boolean;
  onChange(draft: Draft): void;
};

function QuestionBody({ baseId, question, mode, draft, busy, onChange }: BodyProps) {
  const typedField = hasTypedField(question, mode);
  const typedLabel = mode === "choice" ? "Other" : "Your answer";
  const typedHintId = `${baseId}-typed-hint`;
  const otherActive = mode === "choice" && !question.multiSelect && draft.useOther;

  return (
    <div>
      {mode === "choice" && (
        <fieldset disabled={busy}>
          <legend className="sr-only">{question.question || question.header}</legend>
          {question.multiSelect && <p className={cx("mb-2 text-sm", muted)}>Choose all that apply.</p>}
          <div className="flex flex-col gap-2">
            {question.options.map((option, i) => {
              const picked = isPicked(question, mode, draft, i);
              const labelId = `${baseId}-opt-${i}`;
              const tagId = `${baseId}-tag-${i}`;
              const descriptionId = `${baseId}-desc-${i}`;
              const recommended = isRecommended(question, i);
              return (
                <label
                  key={option.label}
                  className={cx(
                    "flex cursor-pointer items-start gap-3 rounded-xl border px-3 py-2.5 transition-colors",
                    picked
                      ? "border-sky-600 bg-sky-50 dark:border-sky-400 dark:bg-sky-950/50"
                      : "border-zinc-200 hover:bg-zinc-50 dark:border-zinc-700 dark:hover:bg-zinc-800/60",
                  )}
                >
                  <input
                    type={question.multiSelect ? "checkbox" : "radio"}
                    name={`${baseId}-choice`}
                    value={option.label}
                    checked={picked}
                    data-option={i}
                    aria-labelledby={recommended ? `${labelId} ${tagId}` : labelId}
                    aria-describedby={option.description ? descriptionId : undefined}
                    onChange={() => onChange(pickOption(question, mode, draft, i))}
                    className="mt-0.5 size-4 shrink-0 accent-sky-700 dark:accent-sky-400"
                  />
                  <span className="min-w-0 flex-1">
                    <span className="flex flex-wrap items-center gap-x-2 gap-y-1">
                      <span id={labelId} className="font-medium break-words" dir="auto">
                        {option.label}
                      </span>
                      {recommended && (
                        <span id={tagId} className={recommendedTag}>
                          Recommended
                        </span>
                      )}
                    </span>
                    {option.description && (
                      <span id={descriptionId} className={cx("mt-0.5 block text-sm break-words", muted)} dir="auto">
                        {option.description}
                      </span>
                    )}
                  </span>
                  {i < 9 && (
                    <kbd aria-hidden="true" className={cx("hidden shrink-0 font-sans text-xs tabular-nums sm:inline", muted)}>
                      {i + 1}
                    </kbd>
                  )}
                </label>
              );
            })}
          </div>
        </fieldset>
      )}

      {mode === "typed-multi" && (
        <div>
          <p className={cx("mb-2 text-sm", muted)}>Choose all that apply: press an option or type their numbers or names.</p>
          <ol className="flex flex-col gap-2">
            {question.options.map((option, i) => {
              const picked = isPicked(question, mode, draft, i);
              const labelId = `${baseId}-opt-${i}`;
              const descriptionId = `${baseId}-desc-${i}`;
              return (
                <li key={option.label}>
                  <button
                    type="button"
                    data-option={i}
                    aria-pressed={picked}
                    aria-labelledby={labelId}
                    aria-describedby={option.description ? descriptionId : undefined}
                    disabled={busy}
                    onClick={() => onChange(pickOption(question, mode, draft, i))}
                    className={cx(
                      "flex w-full items-start gap-3 rounded-xl border px-3 py-2.5 text-start transition-colors",
                      picked
                        ? "border-sky-600 bg-sky-50 dark:border-sky-400 dark:bg-sky-950/50"
                        : "border-zinc-200 hover:bg-zinc-50 dark:border-zinc-700 dark:hover:bg-zinc-800/60",
                    )}
                  >
                    <span aria-hidden="true" className="w-5 shrink-0 font-semibold tabular-nums">
                      {i + 1}.
                    </span>
                    <span className="min-w-0 flex-1">
                      <span id={labelId} className="block font-medium break-words" dir="auto">
                        {option.label}
                      </span>
                      {option.description && (
                        <span id={descriptionId} className={cx("block text-sm break-words", muted)} dir="auto">
                          {option.description}
                        </span>
                      )}
                    </span>
                    <span aria-hidden="true" className="shrink-0 text-sky-700 dark:text-sky-300">
                      {picked ? "✓" : ""}
                    </span>
                  </button>
                </li>
              );
            })}
          </ol>
        </div>
      )}

      {typedField && (
        <div className={question.options.length > 0 ? "mt-3" : undefined}>
          <label htmlFor={`${baseId}-typed`} className="mb-1 block text-sm font-medium">
            {typedLabel}
          </label>
          {mode === "text" ? (
            <textarea
              id={`${baseId}-typed`}
              rows={2}
              dir="auto"
              value={draft.other}
              disabled={busy}
              aria-describedby={typedHintId}
              onChange={(event) => onChange(typeOther(question, mode, draft, event.target.value))}
              className={cx(textInput, "resize-y")}
            />
          ) : (
            <input
              id={`${baseId}-typed`}
              type="text"
              dir="auto"
              autoComplete="off"
              value={draft.other}
              disabled={busy}
              aria-describedby={mode === "typed-multi" ? typedHintId : undefined}
              placeholder={mode === "typed-multi" ? "e.g. 1, 3" : "Type your own answer"}
              onChange={(event) => onChange(typeOther(question, mode, draft, event.target.value))}
              className={cx(textInput, otherActive && "border-sky-600 ring-2 ring-sky-500/40 dark:border-sky-400")}
            />
          )}
          {mode === "text" && (
            <p id={typedHintId} className={cx("mt-1 text-xs", muted)}>
              Enter sends, Shift+Enter starts a new line.
            </p>
          )}
          {mode === "typed-multi" && (
            <p id={typedHintId} className={cx("mt-1 text-xs", muted)}>
              Numbers or names, separated by commas or spaces.
            </p>
          )}
        </div>
      )}
    </div>
  );
}
