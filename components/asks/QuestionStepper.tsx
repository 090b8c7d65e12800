import type { QuestionAsk } from "../../lib/ask.ts";
import { cx } from "./format.ts";
import { type Draft, draftValues, EMPTY_DRAFT, questionMode } from "./question-model.ts";

/** The steps of a 2-3 question ask: where you are, which are answered; each step is a button to it. */
export function QuestionStepper({
  ask,
  drafts,
  current,
  onGo,
}: {
  ask: QuestionAsk;
  drafts: Record<string, Draft>;
  current: number;
  onGo: (step: number) => void;
}) {
  return (
    <nav aria-label="Questions" className="mb-3">
      <ol className="flex gap-1.5">
        {ask.questions.map((question, i) => {
          const answered =
            draftValues(question, questionMode(ask, question), drafts[question.id] ?? EMPTY_DRAFT)
              .length > 0;
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
                  <span
                    aria-hidden="true"
                    className="shrink-0 text-emerald-700 dark:text-emerald-400"
                  >
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
