import { useEffect, useLayoutEffect, useRef, useState } from "react";
import type { Ask } from "../../lib/ask.ts";
import type { SecretOutcome, TabAnswer } from "../../lib/protocol.ts";
import { askTitle } from "../../lib/wording.ts";
import { cx } from "../asks/format.ts";
import { dangerButton, muted } from "../asks/styles.ts";
import type { AnswerResult, NumberPick } from "../asks/types.ts";
import { InboxRow } from "./InboxRow.tsx";
import { useInboxKeys } from "./use-inbox-keys.ts";
import type { KeptFocus } from "./use-kept-focus.ts";

type Props = {
  /** Most urgent first. */
  pending: Ask[];
  answer: (askId: string, answer: TabAnswer) => Promise<AnswerResult>;
  kept: KeptFocus;
  /** The inbox is the view shown: its keys work. */
  active: boolean;
  /** Connected, and an owner's: an empty inbox says so (else it shows a dash). */
  ready: boolean;
  openWebUiUrl: string | null;
  chatTitles: ReadonlyMap<string, string>;
  onHelp: () => void;
  /** The ask the address names (`#ask=<id>`) is listed and about to open: show the inbox. */
  onReveal: () => void;
  onModal: (open: boolean) => void;
  onSecretOutcome: (outcome: SecretOutcome) => void;
};

/** A copy of `set` that holds `id` or not (React state is never changed in place). */
function withMember(set: ReadonlySet<string>, id: string, member: boolean): Set<string> {
  const next = new Set(set);
  if (member) next.add(id);
  else next.delete(id);
  return next;
}

/**
 * The inbox (docs/ARCHITECTURE.md#user-interface): every pending ask across chats as compact rows that open in place to the
 * cards the widget shows, with keyboard triage (use-inbox-keys.ts) and bulk deny/cancel. A number key
 * on a row opens it and hands the number to its card (`pick`).
 */
export function InboxPanel({
  pending,
  answer,
  kept,
  active,
  ready,
  openWebUiUrl,
  chatTitles,
  onHelp,
  onReveal,
  onModal,
  onSecretOutcome,
}: Props) {
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [expanded, setExpanded] = useState<ReadonlySet<string>>(new Set());
  const [pick, setPick] = useState<(NumberPick & { id: string }) | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [bulkBusy, setBulkBusy] = useState(false);
  const openAtRef = useAskAddress();
  const { emptyRef } = kept;

  // Selection and open rows only ever hold pending asks.
  useEffect(() => {
    const ids = new Set(pending.map((ask) => ask.id));
    const live = (current: ReadonlySet<string>) => {
      const still = new Set([...current].filter((id) => ids.has(id)));
      return still.size === current.size ? current : still;
    };
    setSelected(live);
    setExpanded(live);
  }, [pending]);

  useLayoutEffect(() => kept.restore(pending.map((ask) => ask.id)), [kept, pending]);

  useEffect(() => {
    const id = openAtRef.current;
    if (!id || !pending.some((ask) => ask.id === id)) return;
    openAtRef.current = null;
    onReveal();
    setExpanded((current) => new Set(current).add(id));
    kept.focusRow(id);
  }, [pending, kept, openAtRef, onReveal]);

  const titleOf = (id: string, otherwise: string) => {
    const ask = pending.find((item) => item.id === id);
    return ask ? askTitle(ask) : otherwise;
  };

  const triage = async (id: string, tabAnswer: TabAnswer, done: string) => {
    const title = titleOf(id, "The ask");
    const result = await answer(id, tabAnswer);
    setMessage(result.ok ? `${done}: ${title}` : `${title}: ${result.error.message}`);
  };

  useInboxKeys(active, {
    help: onHelp,
    move: (row, step) => {
      const index = row === null ? -1 : pending.findIndex((ask) => ask.id === row);
      const next =
        pending[
          index < 0
            ? step === 1
              ? 0
              : pending.length - 1
            : Math.min(Math.max(index + step, 0), pending.length - 1)
        ];
      if (next) kept.focusRow(next.id);
    },
    deny: (row) =>
      void triage(
        row,
        { type: "cancel" },
        pending.find((ask) => ask.id === row)?.kind === "approval" ? "Denied" : "Cancelled",
      ),
    allow: (row) => {
      const ask = pending.find((item) => item.id === row);
      if (ask?.kind !== "approval" || !ask.approval.decisions.includes("allow-once")) {
        setMessage("Only an approval that offers Allow once can be allowed with a.");
        return;
      }
      void triage(row, { type: "decision", decision: "allow-once" }, "Allowed once");
    },
    pick: (row, digit) => {
      setExpanded((current) => new Set(current).add(row));
      setPick({ id: row, digit: Number(digit), taken: () => setPick(null) });
    },
  });

  const bulkCancel = async () => {
    const ids = [...selected];
    if (ids.length === 0 || bulkBusy) return;
    setBulkBusy(true);
    setMessage(null);
    const results = await Promise.all(
      ids.map(async (id) => ({ id, result: await answer(id, { type: "cancel" }) })),
    );
    const failed = results.filter((item) => !item.result.ok);
    const done = results.length - failed.length;
    const parts = [];
    if (done > 0) parts.push(`${done} ${done === 1 ? "ask" : "asks"} denied or cancelled.`);
    for (const item of failed)
      if (!item.result.ok)
        parts.push(`${titleOf(item.id, "An ask")}: ${item.result.error.message}`);
    setMessage(parts.join(" "));
    setSelected(new Set());
    setBulkBusy(false);
  };

  const allSelected = pending.length > 0 && pending.every((ask) => selected.has(ask.id));
  return (
    <>
      {pending.length > 0 && (
        <div className="mb-3 flex flex-wrap items-center gap-x-4 gap-y-2 rounded-xl border border-zinc-200 bg-white px-3 py-2 dark:border-zinc-800 dark:bg-zinc-900">
          <label className="inline-flex min-h-11 items-center gap-2 text-sm">
            <input
              type="checkbox"
              checked={allSelected}
              ref={(element) => {
                if (element) element.indeterminate = selected.size > 0 && !allSelected;
              }}
              onChange={(event) =>
                setSelected(
                  event.target.checked ? new Set(pending.map((ask) => ask.id)) : new Set(),
                )
              }
              className="size-5 accent-sky-700 dark:accent-sky-400"
            />
            Select all
          </label>
          <span className={cx("text-sm", muted)}>{selected.size} selected</span>
          <button
            type="button"
            className={cx(dangerButton, "ms-auto")}
            disabled={selected.size === 0 || bulkBusy}
            onClick={() => void bulkCancel()}
          >
            {bulkBusy ? "Working…" : "Deny or cancel selected"}
          </button>
        </div>
      )}
      <p role="status" className={cx("mb-3 text-sm empty:hidden", muted)}>
        {message}
      </p>
      {pending.length === 0 ? (
        <p
          ref={emptyRef}
          tabIndex={-1}
          className={cx(
            "rounded-xl border border-dashed border-zinc-300 px-4 py-8 text-center text-sm dark:border-zinc-700",
            muted,
          )}
        >
          {ready ? "Nothing pending" : "—"}
        </p>
      ) : (
        // While the socket is away an answer cannot go: the rows' controls wait, disabled (the header says why).
        <fieldset disabled={!ready} className="m-0 min-w-0 border-0 p-0">
          <ul
            aria-label="Pending asks"
            onFocus={(event) => kept.onFocus(event)}
            className="flex flex-col gap-2 [overflow-anchor:none]"
          >
            {pending.map((ask) => (
              <InboxRow
                key={ask.id}
                ask={ask}
                expanded={expanded.has(ask.id)}
                onExpand={(open) => setExpanded((current) => withMember(current, ask.id, open))}
                selected={selected.has(ask.id)}
                onSelect={(on) => setSelected((current) => withMember(current, ask.id, on))}
                onAnswer={(tabAnswer) => answer(ask.id, tabAnswer)}
                openWebUiUrl={openWebUiUrl}
                chatTitle={ask.chatId === null ? undefined : chatTitles.get(ask.chatId)}
                onModal={onModal}
                onSecretOutcome={onSecretOutcome}
                pick={pick?.id === ask.id ? pick : undefined}
              />
            ))}
          </ul>
        </fieldset>
      )}
      <p className={cx("mt-3 hidden text-xs sm:block", muted)}>
        Press <kbd className="font-mono">?</kbd> for keyboard shortcuts.
      </p>
    </>
  );
}

/**
 * The ask a notification opened the dashboard at (`/#ask=<id>`), until its row opens. An address that
 * is not valid percent-encoding (typed or crafted) names none; it must not throw.
 */
function useAskAddress() {
  const openAt = useRef<string | null>(null);
  useEffect(() => {
    const read = () => {
      const match = /^#ask=(.+)$/.exec(window.location.hash);
      if (!match?.[1]) return;
      try {
        openAt.current = decodeURIComponent(match[1]);
      } catch {
        openAt.current = null;
      }
    };
    read();
    window.addEventListener("hashchange", read);
    return () => window.removeEventListener("hashchange", read);
  }, []);
  return openAt;
}
