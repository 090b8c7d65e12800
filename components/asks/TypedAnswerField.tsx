import type { AskQuestion } from "../../lib/ask.ts";
import { cx } from "./format.ts";
import { type Draft, type QuestionMode, typeOther } from "./question-model.ts";
import { muted, quietText, textInput } from "./styles.ts";

type Props = {
  baseId: string;
  question: AskQuestion;
  mode: QuestionMode;
  draft: Draft;
  busy: boolean;
  onChange: (draft: Draft) => void;
};

const HINTS: Partial<Record<QuestionMode, string>> = {
  text: "Enter sends, Shift+Enter starts a new line.",
  "typed-multi": "Numbers or names, separated by commas or spaces.",
};

/** The typed answer: "Other" beside options, "Your answer" when there are none (docs/ARCHITECTURE.md#user-interface). */
export function TypedAnswerField({ baseId, question, mode, draft, busy, onChange }: Props) {
  const id = `${baseId}-typed`;
  const hintId = `${baseId}-typed-hint`;
  const hint = HINTS[mode];
  const otherActive = mode === "choice" && !question.multiSelect && draft.useOther;
  const change = (value: string) => onChange(typeOther(question, mode, draft, value));
  // Other beside options is Open WebUI's inline row: "Other", then a borderless field.
  if (mode === "choice") {
    return (
      <div
        className={cx(
          "mt-0.5 flex min-w-0 items-baseline gap-2 rounded-lg px-1.5 py-1.5 text-xs focus-within:ring-2 focus-within:ring-sky-500/60",
          otherActive && "bg-neutral-200/80 dark:bg-white/[0.08]",
        )}
      >
        <label htmlFor={id} className="shrink-0">
          Other
        </label>
        <input
          id={id}
          type="text"
          dir="auto"
          autoComplete="off"
          value={draft.other}
          disabled={busy}
          placeholder="Type your answer"
          onChange={(event) => change(event.target.value)}
          className="min-w-0 flex-1 bg-transparent text-xs text-neutral-900 placeholder:text-neutral-600 focus:outline-none dark:text-neutral-100 dark:placeholder:text-neutral-400"
        />
      </div>
    );
  }
  return (
    <div className={question.options.length > 0 ? "mt-2" : undefined}>
      <label htmlFor={id} className={cx("mb-1 block text-xs", quietText)}>
        Your answer
      </label>
      {mode === "text" ? (
        <textarea
          id={id}
          rows={2}
          dir="auto"
          value={draft.other}
          disabled={busy}
          aria-describedby={hintId}
          onChange={(event) => change(event.target.value)}
          className={cx(textInput, "resize-y")}
        />
      ) : (
        <input
          id={id}
          type="text"
          dir="auto"
          autoComplete="off"
          value={draft.other}
          disabled={busy}
          aria-describedby={hint ? hintId : undefined}
          placeholder="e.g. 1, 3"
          onChange={(event) => change(event.target.value)}
          className={textInput}
        />
      )}
      {hint && (
        <p id={hintId} className={cx("mt-1 text-xs", muted)}>
          {hint}
        </p>
      )}
    </div>
  );
}
