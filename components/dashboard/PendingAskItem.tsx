import { useEffect, useId, useRef, useState } from "react";
import { createPortal } from "react-dom";
import type { Ask, SecretAsk } from "../../lib/ask.ts";
import type { SecretOutcome } from "../../lib/protocol.ts";
import { AskView } from "../asks/AskView.tsx";
import { KIND_LABELS, askTitle, cx, formatSpan } from "../asks/format.ts";
import { SecretDialog } from "../asks/SecretDialog.tsx";
import { card, ghostButton, muted, primaryButton, secretEyebrow } from "../asks/styles.ts";
import type { SubmitAnswer } from "../asks/types.ts";
import { useSendAnswer } from "../asks/use-send-answer.ts";
import { useNow } from "../../client/use-now.ts";

type Props = {
  ask: Ask;
  selected: boolean;
  onSelect(on: boolean): void;
  onAnswer: SubmitAnswer;
  /** A secret's dialog is open: the page behind it goes inert. */
  onModal(open: boolean): void;
  onSecretOutcome(outcome: SecretOutcome): void;
};

/** One pending ask on the dashboard: where it comes from, how old it is, how long it has, and its card. */
export function PendingAskItem({ ask, selected, onSelect, onAnswer, onModal, onSecretOutcome }: Props) {
  return (
    <li className="flex flex-col gap-1.5">
      <div className="flex flex-wrap items-center gap-x-3 gap-y-1 px-1 text-xs">
        <input
          type="checkbox"
          checked={selected}
          onChange={(event) => onSelect(event.target.checked)}
          aria-label={`Select: ${askTitle(ask)}`}
          className="size-4 accent-sky-700 dark:accent-sky-400"
        />
        <AskMeta ask={ask} />
      </div>
      {ask.kind === "secret" ? (
        <SecretLauncher ask={ask} onAnswer={onAnswer} onModal={onModal} onOutcome={onSecretOutcome} />
      ) : (
        <AskView ask={ask} onAnswer={onAnswer} headingLevel={3} />
      )}
    </li>
  );
}

/** Where the ask comes from and its clock; only this line re-renders every second. */
function AskMeta({ ask }: { ask: Ask }) {
  const now = useNow(1000);
  const left = ask.expiresAt !== null ? ask.expiresAt - now : null;
  return (
    <dl className="flex min-w-0 flex-wrap gap-x-3 gap-y-0.5">
      <Meta label="Chat" value={ask.chatId ?? "none (dashboard only)"} mono={ask.chatId !== null} />
      <Meta label="Agent" value={ask.agentId} mono />
      <Meta label="Kind" value={KIND_LABELS[ask.kind]} />
      <Meta label="Age" value={formatSpan(now - ask.createdAt)} />
      <Meta label="Time left" value={left === null ? "no limit" : left > 0 ? formatSpan(left) : "expiring"} />
    </dl>
  );
}

function Meta({ label, value, mono }: { label: string; value: string; mono?: boolean }) {
  return (
    <div className="flex min-w-0 gap-1">
      <dt className={muted}>{label}</dt>
      <dd className={cx("min-w-0 truncate font-medium", mono && "font-mono")} title={value}>
        {value}
      </dd>
    </div>
  );
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
  onModal(open: boolean): void;
  onOutcome(outcome: SecretOutcome): void;
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
    <section aria-labelledby={titleId} data-ask-id={ask.id} className={cx(card, "border-amber-300 dark:border-amber-500/60")}>
      <p className={secretEyebrow}>Secret requested</p>
      <h3 id={titleId} className="mt-1 text-base font-semibold break-words" dir="auto">
        {ask.secret.name ?? "Secret"}
      </h3>
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
        <button ref={openerRef} type="button" className={primaryButton} disabled={busy} onClick={() => setOpen(true)}>
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
