import type { AskQuestion } from "../../lib/ask.ts";
import { cx } from "./format.ts";
import { OptionRow } from "./OptionRow.tsx";
import {
  type Draft,
  hasTypedField,
  isPicked,
  isRecommended,
  pickOption,
  type QuestionMode,
} from "./question-model.ts";
import { muted } from "./styles.ts";
import { TypedAnswerField } from "./TypedAnswerField.tsx";

type Props = {
  baseId: string;
  question: AskQuestion;
  mode: Exclude<QuestionMode, "confirm">;
  draft: Draft;
  busy: boolean;
  onChange: (draft: Draft) => void;
  /** An option picked by a click (or Space): the card may go on to the next question. */
  onPick?: (draft: Draft) => void;
};

/** The answer fields of one question: its options (radios, checkboxes or numbered toggles) and the typed answer. */
export function QuestionFields({
  baseId,
  question,
  mode,
  draft,
  busy,
  onChange,
  onPick = onChange,
}: Props) {
  const option = (i: number, control: "radio" | "checkbox" | "toggle") => (
    <OptionRow
      key={question.options[i]!.label}
      baseId={baseId}
      index={i}
      option={question.options[i]!}
      control={control}
      name={`${baseId}-choice`}
      picked={isPicked(question, mode, draft, i)}
      recommended={isRecommended(question, i)}
      busy={busy}
      onPick={() => onPick(pickOption(question, mode, draft, i))}
    />
  );

  return (
    <div>
      {mode === "choice" && (
        <fieldset disabled={busy}>
          <legend className="sr-only">{question.question || question.header}</legend>
          {question.multiSelect && (
            <p className={cx("mb-1 text-xs", muted)}>Choose all that apply.</p>
          )}
          <div className="flex flex-col gap-0.5">
            {question.options.map((_, i) => option(i, question.multiSelect ? "checkbox" : "radio"))}
          </div>
        </fieldset>
      )}

      {mode === "typed-multi" && (
        <div>
          <p className={cx("mb-1 text-xs", muted)}>
            Choose all that apply: press an option or type their numbers or names.
          </p>
          <ol className="flex flex-col gap-0.5">
            {question.options.map((item, i) => (
              <li key={item.label}>{option(i, "toggle")}</li>
            ))}
          </ol>
        </div>
      )}

      {hasTypedField(question, mode) && (
        <TypedAnswerField
          baseId={baseId}
          question={question}
          mode={mode}
          draft={draft}
          busy={busy}
          onChange={onChange}
        />
      )}
    </div>
  );
}
