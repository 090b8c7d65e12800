import type { AskQuestion } from "../../lib/ask.ts";
import { cx } from "./format.ts";
import { type Draft, type QuestionMode, typeOther } from "./question-model.ts";
import { muted, textInput } from "./styles.ts";

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
  return (
    <div className={question.options.length > 0 ? "mt-3" : undefined}>
      <label htmlFor={id} className="mb-1 block text-sm font-medium">
        {mode === "choice" ? "Other" : "Your answer"}
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
          placeholder={mode === "typed-multi" ? "e.g. 1, 3" : "Type your own answer"}
          onChange={(event) => change(event.target.value)}
          className={cx(
            textInput,
            otherActive && "border-sky-600 ring-2 ring-sky-500/40 dark:border-sky-400",
          )}
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
