import type { AskKind, AskStatus } from "../../lib/ask.ts";
import { RECORD_HEADINGS, summaryPrefix } from "../../lib/wording.ts";
import { cx, formatTime, textDirection } from "./format.ts";
import { muted } from "./styles.ts";

type Props = {
  /** What it was: the record's heading says so (❓ Ask User, 🔑 Secret, 🛡️ Approval). */
  kind: AskKind;
  /** What was asked (the question, the secret's request, the approval). */
  question: string;
  /** The resolution's display summary: the answer, `•••• (secret entered)`, `Cancelled (nothing entered)`… */
  summary: string;
  status?: AskStatus;
  at?: number;
  defaultOpen?: boolean;
};

/** The collapsible record of a finished ask, headed by what it was (docs/ARCHITECTURE.md#text-prompts, #user-interface). */
export function AskSummary({ kind, question, summary, status, at, defaultOpen = false }: Props) {
  const heading = RECORD_HEADINGS[kind];
  const dir = textDirection(question, summary);
  const prefix = summaryPrefix(status, summary);
  return (
    <details
      open={defaultOpen}
      dir={dir}
      className="group rounded-xl border border-zinc-200 bg-white text-sm dark:border-zinc-700 dark:bg-zinc-900"
    >
      <summary className="flex cursor-pointer list-none items-center gap-2 rounded-xl px-3 py-2 select-none [&::-webkit-details-marker]:hidden">
        <span
          aria-hidden="true"
          className={cx(
            "text-xs transition-transform group-open:rotate-90 rtl:-scale-x-100",
            muted,
          )}
        >
          ▶
        </span>
        <span className="font-medium" data-record={kind}>
          <span aria-hidden="true">{heading.icon}</span> {heading.label}
        </span>
        <span className={cx("min-w-0 flex-1 truncate", muted)} dir="auto">
          {summary}
        </span>
      </summary>
      <div className="space-y-1.5 border-t border-zinc-200 px-3 py-2 dark:border-zinc-700">
        <p className="break-words whitespace-pre-line" dir="auto">
          {question}
        </p>
        <p className="break-words whitespace-pre-line" dir="auto">
          {prefix && <span className={muted}>{prefix}</span>}
          <span className="font-medium">{summary}</span>
        </p>
        {at !== undefined && <p className={cx("text-xs", muted)}>{formatTime(at)}</p>}
      </div>
    </details>
  );
}
