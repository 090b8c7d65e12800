"use client";

import { useCallback, useEffect, useReducer, useRef, useState } from "react";
import type { Ask, AskKind, AskStatus } from "../../lib/ask.ts";
import { CLOSE_OUTCOMES } from "../../lib/labels.ts";
import type { AskClose } from "../../lib/protocol.ts";
import { request, type TabClientSocket } from "../../client/socket.ts";
import { useTabSession } from "../../client/use-tab-session.ts";
import { AskSummary } from "../asks/AskSummary.tsx";
import { AskView } from "../asks/AskView.tsx";
import { askQuestionText, askTitle, cx, secretOutcomeToast } from "../asks/format.ts";
import { muted, secondaryButton } from "../asks/styles.ts";
import { useToast } from "../common/use-toast.ts";
import { StatusPill, describeStatus } from "../common/ConnectionStatus.tsx";
import { useFrameHeight } from "./use-frame-height.ts";

/**
 * The widget Open WebUI embeds in a sandboxed iframe for one chat (DESIGN §2, §6, §8): it views the
 * chat, shows the asks the server routes to this tab, keeps a ❓ Ask User record of each one that
 * finishes here, and reports its height to the host page.
 */

type Finished = { id: string; question: string; summary: string; status: AskStatus; at: number };

type State = { pending: Ask[]; history: Finished[]; moved: boolean; announcement: string };

type Action =
  | { type: "show"; ask: Ask }
  | { type: "close"; close: AskClose; at: number }
  /** After a reconnect and chat:view: only the asks the server showed again are still pending. */
  | { type: "keep-only"; ids: ReadonlySet<string> };

const ARRIVAL: Record<AskKind, string> = {
  question: "New question from the agent",
  secret: "The agent requests a secret",
  approval: "The agent needs an approval",
};

function reducer(state: State, action: Action): State {
  switch (action.type) {
    case "show": {
      const known = state.pending.some((ask) => ask.id === action.ask.id);
      return {
        ...state,
        moved: false,
        pending: known ? state.pending.map((ask) => (ask.id === action.ask.id ? action.ask : ask)) : [...state.pending, action.ask],
        announcement: known ? state.announcement : `${ARRIVAL[action.ask.kind]}: ${askTitle(action.ask)}`,
      };
    }
    case "close": {
      const ask = state.pending.find((item) => item.id === action.close.askId);
      const pending = state.pending.filter((item) => item.id !== action.close.askId);
      if (action.close.reason === "handed-off") {
        return { ...state, pending, moved: ask !== undefined || state.moved, announcement: "This question is now open in a newer tab." };
      }
      if (!ask) return state;
      const outcome = CLOSE_OUTCOMES[action.close.reason];
      const finished: Finished = { id: ask.id, question: askQuestionText(ask), summary: action.close.summary ?? outcome.summary, status: outcome.status, at: action.at };
      return { ...state, pending, history: [...state.history.filter((item) => item.id !== ask.id), finished] };
    }
    case "keep-only":
      return { ...state, pending: state.pending.filter((ask) => action.ids.has(ask.id)) };
  }
}

const INITIAL: State = { pending: [], history: [], moved: false, announcement: "" };

export function EmbedWidget({ chatId }: { chatId: string }) {
  const [state, dispatch] = useReducer(reducer, INITIAL);
  const [viewError, setViewError] = useState<string | null>(null);
  const [toast, setToast] = useToast();
  const rootRef = useRef<HTMLElement>(null);
  const statusRef = useRef<HTMLDivElement>(null);
  const returnFocus = useRef<Element | null>(null);
  const restoreFocus = useRef(false);
  const [focusTarget, setFocusTarget] = useState<string | null>(null);

  useFrameHeight(rootRef);

  const setup = useCallback(
    (socket: TabClientSocket) => {
      let shownSinceConnect: Set<string> | null = null;
      const view = () => {
        const shown = new Set<string>();
        shownSinceConnect = shown;
        void request(socket, (timed) => timed.emitWithAck("chat:view", { chatId })).then((ack) => {
          if (shownSinceConnect === shown) shownSinceConnect = null;
          if (!ack.ok) {
            setViewError(`Cannot show this chat's questions: ${ack.error.message}.`);
            return;
          }
          setViewError(null);
          // The server shows every pending ask of the chat before it acks chat:view.
          dispatch({ type: "keep-only", ids: shown });
        });
      };
      socket.on("connect", view);
      socket.on("ask:show", (ask) => {
        shownSinceConnect?.add(ask.id);
        const active = document.activeElement;
        if (!rootRef.current?.querySelector("[data-ask-id]")?.contains(active)) returnFocus.current = active;
        // Take focus only when this document has it: never steal keystrokes from the host page's composer.
        if (document.hasFocus()) setFocusTarget(ask.id);
        dispatch({ type: "show", ask });
      });
      socket.on("ask:close", (close) => {
        const card = rootRef.current?.querySelector(`[data-ask-id="${CSS.escape(close.askId)}"]`);
        if (card?.contains(document.activeElement)) restoreFocus.current = true;
        dispatch({ type: "close", close, at: Date.now() });
      });
      return () => {
        shownSinceConnect = null;
      };
    },
    [chatId],
  );

  const { socket, connection, gateway, answer, tokenProblem } = useTabSession({ relink: "Reopen the chat to get a new link.", setup });

  // Focus goes back where it was once the card that had it closes (or to the widget's status line).
  useEffect(() => {
    if (!restoreFocus.current) return;
    restoreFocus.current = false;
    const next = rootRef.current?.querySelector<HTMLElement>("[data-ask-id]");
    const previous = returnFocus.current;
    if (next) next.focus();
    else if (previous instanceof HTMLElement && previous.isConnected && previous !== document.body) previous.focus();
    else statusRef.current?.focus();
  }, [state.pending]);

  const showHere = () => {
    if (socket) void request(socket, (timed) => timed.emitWithAck("chat:view", { chatId }));
  };

  const status = describeStatus(connection, gateway);
  const secret = state.pending.find((ask) => ask.kind === "secret");
  const others = state.pending.filter((ask) => ask.kind !== "secret");
  const problem = tokenProblem ?? viewError;

  return (
    <main ref={rootRef} aria-label="Agent questions" className="flex flex-col gap-2 bg-white p-1.5 font-sans text-zinc-900 dark:bg-zinc-900 dark:text-zinc-100">
      <div role="status" aria-live="polite" className="sr-only">
        {state.announcement}
      </div>

      {state.history.length > 0 && (
        <section aria-label="Answered here" inert={secret !== undefined || undefined} className="flex flex-col gap-1.5">
          {state.history.map((item) => (
            <AskSummary key={item.id} question={item.question} summary={item.summary} status={item.status} at={item.at} />
          ))}
        </section>
      )}

      {secret && (
        <AskView
          key={secret.id}
          ask={secret}
          onAnswer={(tabAnswer) => answer(secret.id, tabAnswer)}
          onSecretOutcome={(outcome) => setToast(secretOutcomeToast(outcome))}
        />
      )}

      {others.map((ask) => (
        <div key={ask.id} inert={secret !== undefined || undefined}>
          <AskView ask={ask} autoFocus={!secret && focusTarget === ask.id} onAnswer={(tabAnswer) => answer(ask.id, tabAnswer)} />
        </div>
      ))}

      {toast && (
        <p role="status" className="rounded-lg bg-emerald-100 px-3 py-2 text-sm font-medium text-emerald-900 dark:bg-emerald-900/60 dark:text-emerald-100">
          {toast}
        </p>
      )}

      {state.moved && state.pending.length === 0 && (
        <div className="flex flex-wrap items-center gap-x-3 gap-y-2 rounded-xl border border-dashed border-zinc-300 px-3 py-2 text-sm dark:border-zinc-600">
          <p className="flex-1">
            <span className="font-medium">Moved to a newer tab</span>
            <span className={muted}> — it is open in another tab of this chat now.</span>
          </p>
          <button type="button" className={cx(secondaryButton, "min-h-8 py-1")} onClick={showHere}>
            Show here
          </button>
        </div>
      )}

      <div ref={statusRef} tabIndex={-1} className="flex flex-wrap items-center gap-x-3 gap-y-1 px-1 text-xs outline-none">
        {problem ? (
          <p role="alert" className="font-medium text-rose-700 dark:text-rose-300">
            {problem}
          </p>
        ) : (
          <>
            {state.pending.length === 0 && !state.moved && connection.phase === "connected" && <p className={muted}>Nothing pending</p>}
            <span role="status">{status.tone !== "ok" && <StatusPill view={status} />}</span>
          </>
        )}
      </div>
    </main>
  );
}
