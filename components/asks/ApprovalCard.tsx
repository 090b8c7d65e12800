import { type KeyboardEvent, useId, useLayoutEffect, useRef, useState } from "react";
import { useNow } from "../../client/use-now.ts";
import type { ApprovalAsk, Decision, Severity } from "../../lib/ask.ts";
import { APPROVAL_NEEDED, DECISION_LABELS, SEVERITY_LABELS } from "../../lib/wording.ts";
import { ApprovalScope } from "./ApprovalScope.tsx";
import { AskOrigin } from "./AskOrigin.tsx";
import { cx, formatCountdown, textDirection } from "./format.ts";
import {
  card,
  cardFocus,
  errorText,
  muted,
  primaryButton,
  recommendedTag,
  secondaryButton,
} from "./styles.ts";
import type { NumberPick, SubmitAnswer } from "./types.ts";
import { useNumberPick } from "./use-number-pick.ts";
import { useSendAnswer } from "./use-send-answer.ts";

type Props = {
  ask: ApprovalAsk;
  onAnswer: SubmitAnswer;
  autoFocus?: boolean;
  headingLevel?: 2 | 3;
  pick?: NumberPick;
};

const SEVERITY_STYLES: Record<Severity, string> = {
  info: "bg-sky-100 text-sky-900 dark:bg-sky-900/60 dark:text-sky-100",
  warning: "bg-amber-100 text-amber-900 dark:bg-amber-900/60 dark:text-amber-100",
  // Solid, where info and warning are pale: a critical approval must not look like a routine one.
  critical: "bg-rose-700 text-white dark:bg-rose-400 dark:text-zinc-950",
};

/** The whole card is framed in red when the plugin says a wrong decision could do real damage. */
const CRITICAL_FRAME = "ring-2 ring-rose-600 dark:ring-rose-400";

/** Details longer than this (characters or lines) start collapsed to a preview of whole lines. */
const PREVIEW_CHARS = 180;
const PREVIEW_LINES = 3;

function previewOf(detail: string): string {
  const lines = detail.split("\n").slice(0, PREVIEW_LINES).join("\n");
  return lines.length > PREVIEW_CHARS ? lines.slice(0, PREVIEW_CHARS).trimEnd() : lines.trimEnd();
}

/**
 * The approval card (docs/ARCHITECTURE.md#user-interface): title, what it would do (the declared scope), description, detail (the
 * Gateway's first 600 characters, expandable), tool and plugin or the command, severity (critical framed
 * in red), one button per allowed decision in the ask's order (Deny first, Recommended), and a live
 * countdown to expiry. Number keys pick a decision (focus it; Enter makes it), Esc cancels, which denies.
 */
export function ApprovalCard({ ask, onAnswer, autoFocus = false, headingLevel = 2, pick }: Props) {
  const { approval } = ask;
  const baseId = useId();
  const rootRef = useRef<HTMLElement>(null);
  const { busy, error, send } = useSendAnswer(onAnswer);
  const [expanded, setExpanded] = useState(false);
  const Heading = headingLevel === 2 ? "h2" : "h3";
  const detail = approval.detail ?? "";
  const long = detail.length > PREVIEW_CHARS || detail.trimEnd().split("\n").length > PREVIEW_LINES;
  const dir = textDirection(approval.title, approval.description);

  // Before it is painted, so no key pressed as it appears goes to the page (QuestionCard.tsx).
  useLayoutEffect(() => {
    if (autoFocus) rootRef.current?.focus();
  }, [autoFocus]);

  // A number picks a decision without making it: Enter (or a click) decides. True when there is one.
  const pressNumber = (digit: number): boolean => {
    const button =
      rootRef.current?.querySelectorAll<HTMLButtonElement>("[data-decision]")[digit - 1];
    button?.focus();
    return button !== undefined;
  };

  useNumberPick(pick, rootRef, (digit) => {
    if (!busy) pressNumber(digit);
  });

  const onKeyDown = (event: KeyboardEvent<HTMLElement>) => {
    if (busy || event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.key === "Escape") {
      event.preventDefault();
      void send({ type: "cancel" });
      return;
    }
    if (/^[1-9]$/.test(event.key) && pressNumber(Number(event.key))) event.preventDefault();
  };

  return (
    <section
      ref={rootRef}
      tabIndex={-1}
      dir={dir}
      aria-labelledby={`${baseId}-title`}
      aria-busy={busy || undefined}
      data-ask-id={ask.id}
      data-severity={approval.severity}
      onKeyDown={onKeyDown}
      className={cx(card, cardFocus, approval.severity === "critical" && CRITICAL_FRAME)}
    >
      <div className="flex flex-wrap items-center gap-2">
        <span
          className={cx(
            "inline-flex items-center rounded-full px-2 py-0.5 text-xs font-semibold",
            SEVERITY_STYLES[approval.severity],
          )}
        >
          <span className="sr-only">Severity: </span>
          {SEVERITY_LABELS[approval.severity]}
        </span>
        <span className="text-xs font-semibold tracking-wide text-zinc-600 uppercase dark:text-zinc-400">
          {APPROVAL_NEEDED}
        </span>
        {ask.expiresAt !== null && <Countdown expiresAt={ask.expiresAt} />}
      </div>

      <Heading
        id={`${baseId}-title`}
        className="mt-2 text-base font-semibold break-words sm:text-lg"
        dir="auto"
      >
        {approval.title}
      </Heading>
      <AskOrigin ask={ask} />
      {approval.scope && <ApprovalScope scope={approval.scope} />}
      {approval.description && (
        <p className="mt-1 text-sm break-words whitespace-pre-line" dir="auto">
          {approval.description}
        </p>
      )}

      {detail && (
        <div className="mt-3">
          <pre
            id={`${baseId}-detail`}
            dir="auto"
            className="overflow-x-auto rounded-lg bg-zinc-100 p-3 font-mono text-xs leading-relaxed break-words whitespace-pre-wrap dark:bg-zinc-800"
          >
            {long && !expanded ? `${previewOf(detail)}…` : detail}
          </pre>
          {long && (
            <button
              type="button"
              aria-expanded={expanded}
              aria-controls={`${baseId}-detail`}
              onClick={() => setExpanded((value) => !value)}
              className="mt-1 text-sm font-medium text-sky-800 underline-offset-2 hover:underline dark:text-sky-300"
            >
              {expanded ? "Show less" : "Show full detail"}
            </button>
          )}
        </div>
      )}

      <dl className="mt-3 grid grid-cols-[auto_1fr] gap-x-3 gap-y-1 text-sm">
        {approval.command ? (
          <>
            <dt className={muted}>Command</dt>
            <dd className="min-w-0">
              <code className="font-mono break-all" dir="ltr">
                {approval.command}
              </code>
            </dd>
          </>
        ) : null}
        {approval.toolName && <NameFact term="Tool" name={approval.toolName} />}
        {approval.pluginId && <NameFact term="Plugin" name={approval.pluginId} />}
      </dl>

      {error && (
        <p role="alert" className={cx("mt-3", errorText)}>
          {error}
        </p>
      )}

      <div className="mt-4 flex flex-wrap items-center gap-2" role="group" aria-label="Decision">
        {approval.decisions.map((decision: Decision, i) => (
          <span key={decision} className="inline-flex items-center gap-2">
            <button
              type="button"
              data-decision={decision}
              disabled={busy}
              aria-describedby={i === 0 ? `${baseId}-recommended` : undefined}
              onClick={() => void send({ type: "decision", decision })}
              className={i === 0 ? primaryButton : secondaryButton}
            >
              {DECISION_LABELS[decision]}
            </button>
            {i === 0 && (
              <span id={`${baseId}-recommended`} className={recommendedTag}>
                Recommended
              </span>
            )}
          </span>
        ))}
      </div>
    </section>
  );
}

/** A fact that is a name (a tool, a plugin): monospaced, left to right whatever the page's direction. */
function NameFact({ term, name }: { term: string; name: string }) {
  return (
    <>
      <dt className={muted}>{term}</dt>
      <dd className="min-w-0 font-mono break-all" dir="ltr">
        {name}
      </dd>
    </>
  );
}

function Countdown({ expiresAt }: { expiresAt: number }) {
  const now = useNow(1000);
  const left = expiresAt - now;
  return (
    <span
      role="timer"
      className={cx(
        "ms-auto text-xs tabular-nums",
        left < 30_000 ? "font-semibold text-rose-700 dark:text-rose-300" : muted,
      )}
    >
      {left > 0 ? `Expires in ${formatCountdown(left)}` : "Expired"}
    </span>
  );
}
