import { type KeyboardEvent, useId, useLayoutEffect, useRef, useState } from "react";
import type { SecretAsk } from "../../lib/ask.ts";
import type { SecretOutcome, TabAnswer } from "../../lib/protocol.ts";
import { KIND_LABELS, SECRET_REQUESTED } from "../../lib/wording.ts";
import { AskOrigin } from "./AskOrigin.tsx";
import { cx, textDirection } from "./format.ts";
import {
  card,
  errorText,
  ghostButton,
  muted,
  primaryButton,
  secondaryButton,
  secretEyebrow,
  textInput,
} from "./styles.ts";
import type { SubmitAnswer } from "./types.ts";
import { useSendAnswer } from "./use-send-answer.ts";

type Props = {
  ask: SecretAsk;
  onAnswer: SubmitAnswer;
  /** How it ended, from the ack's `outcome`: the page shows the toast. */
  onOutcome?: (outcome: SecretOutcome) => void;
  headingLevel?: 2 | 3;
};

/** A field's Enter runs the dialog's action instead of a (nonexistent) form's submit. */
const onEnter = (event: KeyboardEvent<HTMLInputElement>, action: () => void) => {
  if (event.key !== "Enter") return;
  event.preventDefault();
  action();
};

/** No autocomplete, spelling help, or password manager (1Password, LastPass, Bitwarden) on the secret field. */
const NO_AUTOFILL = {
  autoComplete: "off",
  autoCorrect: "off",
  autoCapitalize: "off",
  spellCheck: false,
  "data-1p-ignore": "",
  "data-lpignore": "true",
  "data-bwignore": "",
  "data-form-type": "other",
} as const;

const FOCUSABLE =
  'button:not([disabled]), input:not([disabled]), [href], select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"])';

/**
 * The masked secret dialog (docs/SECURITY.md#secrets-are-never-kept; docs/ARCHITECTURE.md#user-interface). The value lives only in the password field's DOM property
 * until Submit: the field is uncontrolled (React would mirror a controlled value into the `value`
 * attribute), it is emptied before the answer is even sent, and nothing here logs or stores it.
 * There is no <form>, so no browser password manager offers to save it.
 */
export function SecretDialog({ ask, onAnswer, onOutcome, headingLevel = 2 }: Props) {
  const { secret } = ask;
  const baseId = useId();
  const dialogRef = useRef<HTMLDivElement>(null);
  const inputRef = useRef<HTMLInputElement>(null);
  const originalHosts = secret.allowedHosts ?? [];
  const [hosts, setHosts] = useState<string[]>(originalHosts);
  const [newHost, setNewHost] = useState("");
  const { busy, error, setError, send } = useSendAnswer(onAnswer);
  const Heading = headingLevel === 2 ? "h2" : "h3";
  const name = secret.name?.trim() || KIND_LABELS.secret;
  const dir = textDirection(secret.reason, secret.prompt);
  // Asked for in the text of a reply on the Gateway's `/v1` endpoint: its answer could only be a chat
  // message, which Open WebUI stores and sends to the model, so no value is taken here at all.
  const maskedEntryOnly = ask.textPrompt?.continues === "chat";

  useLayoutEffect(() => {
    // Before it is painted (QuestionCard.tsx). Not when the page does not have focus (the widget while the person types in Open WebUI's composer).
    if (document.hasFocus())
      (inputRef.current ?? dialogRef.current?.querySelector<HTMLElement>("button"))?.focus();
  }, []);

  const finish = async (answer: TabAnswer) => {
    const accepted = await send(answer);
    if (!accepted) {
      inputRef.current?.focus();
      return;
    }
    // The server says how a secret ended (stored, sent or cancelled) in its ack.
    if (accepted.outcome) onOutcome?.(accepted.outcome);
  };

  const submit = () => {
    if (busy) return;
    const input = inputRef.current;
    if (!input) return;
    const value = input.value;
    // Cleared before anything else happens: the value is never kept by the page.
    input.value = "";
    if (!value) {
      setError("Enter the secret, or Cancel.");
      input.focus();
      return;
    }
    const changed =
      secret.allowedHostsEditable &&
      (hosts.length !== originalHosts.length || hosts.some((host, i) => host !== originalHosts[i]));
    void finish(
      changed ? { type: "secret", value, allowedHosts: hosts } : { type: "secret", value },
    );
  };

  const cancel = () => {
    if (busy) return;
    if (inputRef.current) inputRef.current.value = "";
    void finish({ type: "cancel" });
  };

  const addHost = () => {
    const host = newHost.trim().toLowerCase();
    if (!host) return;
    if (!/^[a-z0-9.*-]+(:\d+)?$/.test(host)) {
      setError(`"${host}" is not a host name.`);
      return;
    }
    setHosts((current) => (current.includes(host) ? current : [...current, host]));
    setNewHost("");
    setError(null);
  };

  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    if (event.key === "Escape") {
      event.preventDefault();
      // Without a field, Cancel would send the agent a message: Esc must not.
      if (!maskedEntryOnly) cancel();
      return;
    }
    if (event.key !== "Tab") return;
    const focusable = [...(dialogRef.current?.querySelectorAll<HTMLElement>(FOCUSABLE) ?? [])];
    const first = focusable[0];
    const lastItem = focusable.at(-1);
    if (!first || !lastItem) return;
    if (event.shiftKey && document.activeElement === first) {
      event.preventDefault();
      lastItem.focus();
    } else if (!event.shiftKey && document.activeElement === lastItem) {
      event.preventDefault();
      first.focus();
    }
  };

  return (
    <div
      ref={dialogRef}
      role="dialog"
      aria-modal="true"
      aria-labelledby={`${baseId}-title`}
      aria-describedby={`${baseId}-why`}
      aria-busy={busy || undefined}
      data-ask-id={ask.id}
      dir={dir}
      onKeyDown={onKeyDown}
      className={cx(card, "border-amber-300 dark:border-amber-500/60")}
    >
      <p className={secretEyebrow}>{SECRET_REQUESTED}</p>
      <Heading
        id={`${baseId}-title`}
        className="mt-1 text-base font-semibold break-words sm:text-lg"
        dir="auto"
      >
        {name}
      </Heading>
      <AskOrigin ask={ask} />
      <div id={`${baseId}-why`} className="mt-2 space-y-1 text-sm">
        {secret.reason && (
          <p dir="auto">
            <span className="font-medium">Why: </span>
            {secret.reason}
          </p>
        )}
        {secret.prompt && secret.prompt !== secret.reason && (
          <p className={muted} dir="auto">
            {secret.prompt}
          </p>
        )}
        <p className={muted}>
          {maskedEntryOnly
            ? "The agent asked for it in its reply's text, so an answer here would become a chat message, stored in the chat and sent to the model. Ask the agent for masked entry instead: it then opens this dialog with a field that goes straight to the Gateway's secret store."
            : "It goes straight to the Gateway's secret store; it is never shown in the chat."}
        </p>
      </div>

      {!maskedEntryOnly && (
        <>
          <div className="mt-4">
            <label
              htmlFor={`${baseId}-value`}
              className="mb-1 block text-sm font-medium"
              dir="auto"
            >
              {name}
            </label>
            <input
              ref={inputRef}
              id={`${baseId}-value`}
              type="password"
              {...NO_AUTOFILL}
              disabled={busy}
              dir="ltr"
              onKeyDown={(event) => onEnter(event, submit)}
              className={textInput}
            />
          </div>

          {(hosts.length > 0 || secret.allowedHostsEditable) && (
            <div className="mt-4" role="group" aria-labelledby={`${baseId}-hosts`}>
              <p id={`${baseId}-hosts`} className="mb-1 text-sm font-medium">
                May be sent to
              </p>
              {hosts.length === 0 ? (
                <p className={cx("text-sm", muted)}>
                  No host yet: the secret can be stored but not sent anywhere.
                </p>
              ) : (
                <ul className="flex flex-wrap gap-1.5">
                  {hosts.map((host) => (
                    <li
                      key={host}
                      className="inline-flex items-center gap-1 rounded-full border border-zinc-300 bg-zinc-50 py-0.5 ps-2.5 pe-1 font-mono text-xs dark:border-zinc-600 dark:bg-zinc-800"
                      dir="ltr"
                    >
                      {host}
                      {secret.allowedHostsEditable && (
                        <button
                          type="button"
                          aria-label={`Remove ${host}`}
                          disabled={busy}
                          onClick={() =>
                            setHosts((current) => current.filter((item) => item !== host))
                          }
                          className="inline-flex size-6 items-center justify-center rounded-full hover:bg-zinc-200 dark:hover:bg-zinc-700"
                        >
                          <span aria-hidden="true">×</span>
                        </button>
                      )}
                    </li>
                  ))}
                </ul>
              )}
              {secret.allowedHostsEditable && (
                <div className="mt-2 flex gap-2">
                  <label htmlFor={`${baseId}-host`} className="sr-only">
                    Add a host
                  </label>
                  <input
                    id={`${baseId}-host`}
                    type="text"
                    inputMode="url"
                    autoComplete="off"
                    placeholder="api.example.com"
                    value={newHost}
                    disabled={busy}
                    dir="ltr"
                    onChange={(event) => setNewHost(event.target.value)}
                    onKeyDown={(event) => onEnter(event, addHost)}
                    className={cx(textInput, "min-w-0 flex-1")}
                  />
                  <button
                    type="button"
                    className={secondaryButton}
                    disabled={busy}
                    onClick={addHost}
                  >
                    Add host
                  </button>
                </div>
              )}
            </div>
          )}
        </>
      )}

      {error && (
        <p role="alert" className={cx("mt-3", errorText)}>
          {error}
        </p>
      )}
      <div className="mt-4 flex flex-wrap justify-end gap-2">
        {maskedEntryOnly ? (
          // No field: the one action sends the agent the request for masked entry, as the person's next chat message.
          <button type="button" className={primaryButton} disabled={busy} onClick={cancel}>
            {busy ? "Sending…" : "Ask for masked entry"}
          </button>
        ) : (
          <>
            <button type="button" className={ghostButton} disabled={busy} onClick={cancel}>
              Cancel
            </button>
            <button type="button" className={primaryButton} disabled={busy} onClick={submit}>
              {busy ? "Sending…" : "Submit"}
            </button>
          </>
        )}
      </div>
    </div>
  );
}
