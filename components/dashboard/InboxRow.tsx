import { useEffect, useId, useRef, useState } from "react";
import { createPortal } from "react-dom";
import { useNow } from "../../client/use-now.ts";
import type { Ask, SecretAsk } from "../../lib/ask.ts";
import type { SecretOutcome } from "../../lib/protocol.ts";
import { KIND_LABELS, kindLabel, SECRET_REQUESTED } from "../../lib/wording.ts";
import { AskOrigin } from "../asks/AskOrigin.tsx";
import { AskView } from "../asks/AskView.tsx";
import { cx, formatSpan } from "../asks/format.ts";
import { SecretDialog } from "../asks/SecretDialog.tsx";
import { card, ghostButton, muted, primaryButton, secretEyebrow } from "../asks/styles.ts";
import type { NumberPick, SubmitAnswer } from "../asks/types.ts";
import { useSendAnswer } from "../asks/use-send-answer.ts";
import { rowTitle } from "./inbox-model.ts";

type Props = {
  ask: Ask;
  expanded: boolean;
  onExpand: (expanded: boolean) => void;
  selected: boolean;
  onSelect: (on: boolean) => void;
  onAnswer: SubmitAnswer;
  /** Open WebUI's address (`OPENWEBUI_URL`): the chat becomes a link back to the conversation. */
  openWebUiUrl: string | null;
  /** Open WebUI's title of the ask's chat, when known: shown instead of its id. */
  chatTitle?: string;
  /** A secret's dialog is open: the page behind it goes inert. */
  onModal: (open: boolean) => void;
  onSecretOutcome: (outcome: SecretOutcome) => void;
  /** A number key pressed on the row, for its card. */
  pick?: NumberPick;
};

const KIND_TONE: Record<Ask["kind"], string> = {
  question: "bg-sky-100 text-sky-900 dark:bg-sky-900/60 dark:text-sky-100",
  secret: "bg-amber-100 text-amber-900 dark:bg-amber-900/60 dark:text-amber-100",
  approval: "bg-zinc-200 text-zinc-900 dark:bg-zinc-700 dark:text-zinc-100",
};

/**
 * One pending ask in the inbox: a compact row (selection, kind, title or question, chat, time left)
 * that expands in place to the full card. The row's toggle is what keyboard triage moves between
 * (`data-row-toggle`); the card inside keeps its own keys.
 */
export function InboxRow({
  ask,
  expanded,
  onExpand,
  selected,
  onSelect,
  onAnswer,
  openWebUiUrl,
  chatTitle,
  onModal,
  onSecretOutcome,
  pick,
}: Props) {
  const panelId = useId();
  const title = rowTitle(ask);
  const critical = ask.kind === "approval" && ask.approval.severity === "critical";
  return (
    <li
      data-inbox-row={ask.id}
      className={cx(
        "rounded-xl border bg-white dark:bg-zinc-900",
        critical
          ? "border-rose-400 dark:border-rose-500/70"
          : "border-zinc-200 dark:border-zinc-800",
      )}
    >
      <div className="flex items-start gap-1 pe-2">
        <label className="flex size-11 shrink-0 cursor-pointer items-center justify-center">
          <input
            type="checkbox"
            checked={selected}
            onChange={(event) => onSelect(event.target.checked)}
            aria-label={`Select: ${title}`}
            className="size-5 accent-sky-700 dark:accent-sky-400"
          />
        </label>
        <div className="flex min-w-0 flex-1 flex-wrap items-center gap-x-3">
          <button
            type="button"
            data-row-toggle
            aria-expanded={expanded}
            aria-controls={panelId}
            onClick={() => onExpand(!expanded)}
            className="flex min-h-11 min-w-0 flex-[1_1_16rem] flex-wrap items-center gap-x-2 gap-y-1 rounded-lg py-1.5 text-start"
          >
            <span
              className={cx(
                "shrink-0 rounded-full px-2 py-0.5 text-xs font-semibold",
                critical
                  ? "bg-rose-700 text-white dark:bg-rose-400 dark:text-zinc-950"
                  : KIND_TONE[ask.kind],
              )}
            >
              {kindLabel(ask)}
            </span>
            {/* On a phone the title gets a line of its own, under the kind and the time left. */}
            <span
              className="min-w-0 flex-1 font-medium break-words max-sm:order-last max-sm:basis-full"
              dir="auto"
            >
              {title}
            </span>
            <TimeLeft expiresAt={ask.expiresAt} />
            <svg
              aria-hidden="true"
              viewBox="0 0 20 20"
              className={cx("size-4 shrink-0 transition-transform", expanded && "rotate-180")}
              fill="currentColor"
            >
              <path d="M5.3 7.3a1 1 0 0 1 1.4 0L10 10.6l3.3-3.3a1 1 0 1 1 1.4 1.4l-4 4a1 1 0 0 1-1.4 0l-4-4a1 1 0 0 1 0-1.4Z" />
            </svg>
          </button>
          <ChatLink chatId={ask.chatId} title={chatTitle} openWebUiUrl={openWebUiUrl} />
          <AskOrigin ask={ask} className="mt-0 py-1" />
        </div>
      </div>
      {expanded && (
        <div id={panelId} data-row-panel className="px-2 pb-2 sm:px-3 sm:pb-3">
          {ask.textPrompt?.continues === "chat" ? (
            <AnsweredInChat ask={ask} openWebUiUrl={openWebUiUrl} />
          ) : ask.kind === "secret" ? (
            <SecretLauncher
              ask={ask}
              onAnswer={onAnswer}
              onModal={onModal}
              onOutcome={onSecretOutcome}
            />
          ) : (
            <AskView ask={ask} onAnswer={onAnswer} headingLevel={3} pick={pick} />
          )}
        </div>
      )}
    </li>
  );
}

/**
 * A text prompt of a reply on the Gateway's `/v1` endpoint: its answer is the person's next message in
 * that chat, which only the chat's own widget can send, so here it is only shown.
 */
function AnsweredInChat({ ask, openWebUiUrl }: { ask: Ask; openWebUiUrl: string | null }) {
  return (
    <section data-ask-id={ask.id} className={card}>
      <p className="text-sm break-words whitespace-pre-line" dir="auto">
        {ask.textPrompt?.fallbackText}
      </p>
      <p className={cx("mt-2 text-sm", muted)}>
        Answer it in its chat: the answer becomes your next message there.
        {ask.chatId !== null && openWebUiUrl && (
          <>
            {" "}
            <a
              href={chatHref(openWebUiUrl, ask.chatId)}
              target="_blank"
              rel="noreferrer"
              className="font-medium text-sky-800 underline dark:text-sky-300"
            >
              Open the chat
            </a>
          </>
        )}
      </p>
    </section>
  );
}

/** Time left, in words; only this part re-renders every second. */
function TimeLeft({ expiresAt }: { expiresAt: number | null }) {
  const now = useNow(1000);
  if (expiresAt === null)
    return <span className={cx("shrink-0 text-xs max-sm:ms-auto", muted)}>no limit</span>;
  const left = expiresAt - now;
  return (
    <span
      className={cx(
        "shrink-0 text-xs tabular-nums max-sm:ms-auto",
        left < 60_000 ? "font-semibold text-rose-700 dark:text-rose-300" : muted,
      )}
    >
      {left > 0 ? `${formatSpan(left)} left` : "expiring"}
    </span>
  );
}

/** The chat the ask came from, by its title when Open WebUI gave it one: a link into Open WebUI when its address is configured. */
function ChatLink({
  chatId,
  title,
  openWebUiUrl,
}: {
  chatId: string | null;
  title: string | undefined;
  openWebUiUrl: string | null;
}) {
  if (chatId === null)
    return <span className={cx("py-1 text-xs", muted)}>no chat (dashboard only)</span>;
  const label = title ? (
    <span className="max-w-[14rem] truncate" dir="auto">
      {title}
    </span>
  ) : (
    <span className="max-w-[14rem] truncate font-mono">{chatId}</span>
  );
  if (!openWebUiUrl) {
    return (
      <span
        className={cx("inline-flex min-w-0 items-center gap-1 py-1 text-xs", muted)}
        title={chatId}
      >
        Chat {label}
      </span>
    );
  }
  return (
    <a
      href={chatHref(openWebUiUrl, chatId)}
      target="_blank"
      rel="noreferrer"
      title={`Open chat ${chatId} in Open WebUI`}
      className="inline-flex min-h-11 min-w-0 items-center gap-1 text-xs font-medium text-sky-800 underline-offset-2 hover:underline dark:text-sky-300"
    >
      Chat {label}
      <span className="sr-only">(opens Open WebUI in a new tab)</span>
    </a>
  );
}

/** The chat's page in Open WebUI. */
function chatHref(openWebUiUrl: string, chatId: string): string {
  return `${openWebUiUrl}/c/${encodeURIComponent(chatId)}`;
}

/** On the dashboard a secret request is a small card; its masked dialog opens on demand, as a modal. */
function SecretLauncher({
  ask,
  onAnswer,
  onModal,
  onOutcome,
}: {
  ask: SecretAsk;
  onAnswer: SubmitAnswer;
  onModal: (open: boolean) => void;
  onOutcome: (outcome: SecretOutcome) => void;
}) {
  const [open, setOpen] = useState(false);
  const { busy, error, send } = useSendAnswer(onAnswer);
  const openerRef = useRef<HTMLButtonElement>(null);
  const titleId = useId();

  useEffect(() => {
    onModal(open);
    if (!open) return;
    return () => onModal(false);
  }, [open, onModal]);

  const close = () => {
    setOpen(false);
    requestAnimationFrame(() => openerRef.current?.focus());
  };

  const cancel = async () => {
    if (await send({ type: "cancel" })) onOutcome("cancelled");
  };

  return (
    <section
      aria-labelledby={titleId}
      data-ask-id={ask.id}
      className={cx(card, "border-amber-300 dark:border-amber-500/60")}
    >
      <p className={secretEyebrow}>{SECRET_REQUESTED}</p>
      <h3 id={titleId} className="mt-1 text-base font-semibold break-words" dir="auto">
        {ask.secret.name ?? KIND_LABELS.secret}
      </h3>
      <AskOrigin ask={ask} />
      {ask.secret.reason && (
        <p className="mt-1 text-sm break-words" dir="auto">
          {ask.secret.reason}
        </p>
      )}
      {ask.secret.allowedHosts && ask.secret.allowedHosts.length > 0 && (
        <p className={cx("mt-1 text-sm", muted)}>
          May be sent to: <span className="font-mono">{ask.secret.allowedHosts.join(", ")}</span>
        </p>
      )}
      {error && (
        <p role="alert" className="mt-2 text-sm font-medium text-rose-700 dark:text-rose-300">
          {error}
        </p>
      )}
      <div className="mt-3 flex flex-wrap justify-end gap-2">
        <button type="button" className={ghostButton} disabled={busy} onClick={() => void cancel()}>
          Cancel
        </button>
        <button
          ref={openerRef}
          type="button"
          className={primaryButton}
          disabled={busy}
          onClick={() => setOpen(true)}
        >
          Enter secret…
        </button>
      </div>
      {open &&
        createPortal(
          <div className="fixed inset-0 z-50 flex items-center justify-center overflow-y-auto bg-zinc-950/60 p-3">
            <div className="w-full max-w-md">
              <SecretDialog
                ask={ask}
                onAnswer={onAnswer}
                onOutcome={(outcome) => {
                  close();
                  onOutcome(outcome);
                }}
              />
            </div>
          </div>,
          document.body,
        )}
    </section>
  );
}
