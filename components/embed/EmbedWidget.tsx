"use client";

import { useCallback, useEffect, useLayoutEffect, useReducer, useRef, useState } from "react";
import { request, type TabClientSocket } from "../../client/socket.ts";
import { tokenReplyId } from "../../client/token.ts";
import { useTabSession } from "../../client/use-tab-session.ts";
import type { Ask } from "../../lib/ask.ts";
import { usesOwnersPower } from "../../lib/policy.ts";
import type { TabAnswer } from "../../lib/protocol.ts";
import {
  CARDS_RECONNECTING,
  OWNERS_POWER_ELSEWHERE,
  secretOutcomeToast,
} from "../../lib/wording.ts";
import { AskSummary } from "../asks/AskSummary.tsx";
import { AskView } from "../asks/AskView.tsx";
import { cx } from "../asks/format.ts";
import { muted, secondaryButton } from "../asks/styles.ts";
import { describeStatus, StatusPill } from "../common/ConnectionStatus.tsx";
import { useToast } from "../common/use-toast.ts";
import { useActToken } from "./use-act-token.ts";
import { useFrameHeight } from "./use-frame-height.ts";
import { useHostTheme } from "./use-host-theme.ts";
import { finishedOf, INITIAL_WIDGET, widgetReducer } from "./widget-state.ts";

/**
 * The widget Open WebUI embeds in a sandboxed iframe for one chat (docs/ARCHITECTURE.md#live-and-idle-widgets, #routing; docs/PROTOCOL.md#tab-protocol-v1): it views the
 * chat, shows the asks the server routes to this tab, keeps a record of each one that
 * finishes here, and reports its height to the host page.
 */

/** The first card that is not hidden (a card whose answer is on its way is). */
function firstVisibleCard(root: HTMLElement | null): HTMLElement | null {
  return root?.querySelector<HTMLElement>("[data-card]:not([hidden]) [data-ask-id]") ?? null;
}

function cardOf(root: HTMLElement | null, askId: string): Element | null {
  return root?.querySelector(`[data-ask-id="${CSS.escape(askId)}"]`) ?? null;
}

export function EmbedWidget({ chatId }: { chatId: string }) {
  const [state, dispatch] = useReducer(widgetReducer, INITIAL_WIDGET);
  const [viewError, setViewError] = useState<string | null>(null);
  /** The server took this widget's chat:view (on the current connection). */
  const [viewing, setViewing] = useState(false);
  const [toast, setToast] = useToast();
  const rootRef = useRef<HTMLElement>(null);
  const statusRef = useRef<HTMLDivElement>(null);
  const returnFocus = useRef<Element | null>(null);
  const restoreFocus = useRef(false);
  /** The card whose answer was refused: it takes focus back. */
  const refocus = useRef<string | null>(null);
  const [focusTarget, setFocusTarget] = useState<string | null>(null);

  useFrameHeight(rootRef);
  useHostTheme();
  useEffect(() => {
    // Not in a frame: the page may take the system's colour scheme (styles.css).
    if (window.parent === window) document.documentElement.dataset.standalone = "true";
  }, []);
  const superseded = useRef(false);
  /** This widget's reply (its token's `msg`): its summaries are the asks last shown in it. */
  const replyId = useRef<string | null>(null);

  /** Views the chat again: this tab becomes its newest viewer and takes its cards. */
  const viewAgain = useCallback(
    (target: TabClientSocket) => void request(target, "chat:view", { chatId }),
    [chatId],
  );

  const setup = useCallback(
    (socket: TabClientSocket) => {
      let shownSinceConnect: Set<string> | null = null;
      const loadSummaries = () =>
        request(socket, "asks:list", { status: "all" }).then((ack) => {
          if (!ack.ok || replyId.current === null) return;
          const finished = ack.asks
            .filter((ask) => ask.status !== "pending" && ask.replyId === replyId.current)
            .map(finishedOf);
          finished.sort((a, b) => a.at - b.at);
          dispatch({ type: "summaries", finished });
        });
      let summariesLoaded = false;
      const view = () => {
        if (superseded.current) return;
        const shown = new Set<string>();
        shownSinceConnect = shown;
        void request(socket, "chat:view", { chatId }).then((ack) => {
          if (shownSinceConnect === shown) shownSinceConnect = null;
          if (!ack.ok) {
            setViewError(`Cannot show this chat's questions: ${ack.error.message}.`);
            return;
          }
          setViewError(null);
          setViewing(true);
          // The server shows every pending ask of the chat before it acks chat:view.
          dispatch({ type: "keep-only", ids: shown });
          if (!summariesLoaded && !superseded.current) {
            summariesLoaded = true;
            void loadSummaries();
          }
        });
      };
      socket.on("connect", view);
      socket.on("disconnect", () => setViewing(false));
      // Only one widget of a chat is live (docs/ARCHITECTURE.md#live-and-idle-widgets): a newer reply's took over, so this one keeps its
      // summaries and lets its socket go. It never views the chat again.
      socket.on("widget:superseded", () => {
        superseded.current = true;
        dispatch({ type: "superseded" });
        if (summariesLoaded) return void socket.disconnect();
        // Superseded before it ever was live (reload, scroll up): its reply's summaries first.
        summariesLoaded = true;
        void loadSummaries().finally(() => socket.disconnect());
      });
      // The tab the user is in wins (docs/ARCHITECTURE.md#routing): coming back to the front views the chat again.
      // Cards it still holds are not shown again, so this view reconciles nothing.
      const onVisible = () => {
        if (document.visibilityState === "visible" && socket.connected && !superseded.current)
          viewAgain(socket);
      };
      document.addEventListener("visibilitychange", onVisible);
      socket.on("ask:show", (ask) => {
        shownSinceConnect?.add(ask.id);
        const active = document.activeElement;
        if (!firstVisibleCard(rootRef.current)?.contains(active)) returnFocus.current = active;
        // Take focus only when this document has it: never steal keystrokes from the host page's composer.
        if (document.hasFocus()) setFocusTarget(ask.id);
        dispatch({ type: "show", ask });
      });
      socket.on("ask:close", (close) => {
        const card = cardOf(rootRef.current, close.askId);
        if (card?.contains(document.activeElement)) restoreFocus.current = true;
        // An ask of this reply refused before any tab showed it (a guest's approval): its summary is the server's.
        if (close.reason === "denied" && !card) void loadSummaries();
        dispatch({ type: "close", close, at: Date.now() });
      });
      return () => {
        shownSinceConnect = null;
        document.removeEventListener("visibilitychange", onVisible);
      };
    },
    [chatId, viewAgain],
  );

  const {
    socket,
    connection,
    gateway,
    answer: sendAnswer,
    problem: connectionProblem,
    token,
  } = useTabSession({ relink: "Reopen the chat to get a new link.", setup });
  const tokenReply = token ? tokenReplyId(token) : null;
  // Before the socket's effect runs setup, which lists the summaries of this reply.
  useLayoutEffect(() => {
    replyId.current = tokenReply;
  }, [tokenReply]);
  const { actToken, missing: actMissing } = useActToken(tokenReply);
  /**
   * An answered card gives way to its line at once (widget-state.ts), and comes back if the answer is
   * refused. A text prompt of a reply on the Gateway's `/v1` endpoint is answered by the person's next
   * message in the chat: Open WebUI submits what its embed asks it to, once the person confirms it in
   * its own dialog (Chat.svelte, `input:prompt:submit`).
   */
  const answer = useCallback(
    async (ask: Ask, tabAnswer: TabAnswer) => {
      const askId = ask.id;
      if (cardOf(rootRef.current, askId)?.contains(document.activeElement))
        restoreFocus.current = true;
      dispatch({ type: "sending", askId, at: Date.now() });
      const act = await actToken(usesOwnersPower(ask));
      const ack = await sendAnswer(askId, tabAnswer, act);
      if (ack.ok) dispatch({ type: "answered", askId, status: ack.status, at: Date.now() });
      else {
        refocus.current = askId;
        dispatch({ type: "unsent", askId });
      }
      if (ack.ok && ack.chatMessage !== undefined && window.parent !== window)
        window.parent.postMessage({ type: "input:prompt:submit", text: ack.chatMessage }, "*");
      return ack;
    },
    [sendAnswer, actToken],
  );

  // Focus goes back where it was once the card that had it closes or is answered (or to the widget's
  // status line); a card whose answer was refused takes it back. Before the change is painted: an
  // ask:close comes from the server, and a key pressed between its paint and a later effect was lost.
  useLayoutEffect(() => {
    const back = refocus.current === null ? null : cardOf(rootRef.current, refocus.current);
    refocus.current = null;
    if (back instanceof HTMLElement && !back.closest("[hidden]")) return back.focus();
    if (!restoreFocus.current) return;
    restoreFocus.current = false;
    const next = firstVisibleCard(rootRef.current);
    const previous = returnFocus.current;
    if (next) next.focus();
    else if (previous instanceof HTMLElement && previous.isConnected && previous !== document.body)
      previous.focus();
    else statusRef.current?.focus();
  }, [state.pending, state.sending]);

  const status = describeStatus(connection, gateway);
  const secret = state.pending.find((ask) => ask.kind === "secret");
  const others = state.pending.filter((ask) => ask.kind !== "secret");
  const isSending = (ask: Ask) => state.sending.includes(ask.id);
  // The secret dialog is modal: the rest waits behind it, unless its answer is on its way.
  const behindSecret = (secret !== undefined && !isSending(secret)) || undefined;
  const problem = state.superseded ? null : (connectionProblem ?? viewError);
  const connected = connection.phase === "connected";
  // A card's answer goes only over a connected socket: while it is away, the cards say so and their
  // controls are disabled (keeping what the person picked or typed) rather than failing on a click.
  const reconnecting = !connected && problem === null && state.pending.length > 0;
  // No empty gap under the reply (docs/ARCHITECTURE.md#live-and-idle-widgets): with nothing to show the widget is 0 px tall, and the
  // connection's state matters only to a card waiting for an answer.
  const showStatus =
    problem !== null || (state.pending.length > 0 && status.tone !== "ok" && !reconnecting);
  const empty =
    state.history.length === 0 &&
    state.pending.length === 0 &&
    !toast &&
    !state.moved &&
    !showStatus;

  return (
    <main
      ref={rootRef}
      aria-label="Agent questions"
      // For tests and tools: whether this widget is its chat's live one, and how many cards it holds.
      data-widget={state.superseded ? "superseded" : viewing && connected ? "live" : "connecting"}
      data-pending={state.pending.length}
      className={cx(
        "flex flex-col gap-2 font-sans text-zinc-900 dark:text-zinc-100",
        !empty && "p-1.5",
      )}
    >
      <div role="status" aria-live="polite" className="sr-only">
        {state.announcement}
      </div>

      {state.history.length > 0 && (
        <section aria-label="Answered here" inert={behindSecret} className="flex flex-col gap-1.5">
          {state.history.map((item) => (
            <AskSummary
              key={item.id}
              kind={item.kind}
              question={item.question}
              summary={item.summary}
              status={item.status}
              at={item.at}
            />
          ))}
        </section>
      )}

      {reconnecting && (
        <p
          role="status"
          className="flex items-center gap-1.5 px-1 text-xs font-medium text-amber-800 dark:text-amber-300"
        >
          <span
            aria-hidden="true"
            className="size-2 shrink-0 animate-pulse rounded-full bg-amber-500"
          />
          {CARDS_RECONNECTING}
        </p>
      )}

      {actMissing && state.pending.some(usesOwnersPower) && (
        <p role="note" className={cx("px-1 text-xs", muted)}>
          {OWNERS_POWER_ELSEWHERE}
        </p>
      )}

      <fieldset
        disabled={!connected}
        className="m-0 flex min-w-0 flex-col gap-2 border-0 p-0 empty:hidden"
      >
        {secret && (
          <div key={secret.id} data-card hidden={isSending(secret) || undefined}>
            <AskView
              ask={secret}
              onAnswer={(tabAnswer) => answer(secret, tabAnswer)}
              onSecretOutcome={(outcome) => setToast(secretOutcomeToast(outcome))}
            />
          </div>
        )}

        {others.map((ask) => (
          <div key={ask.id} data-card hidden={isSending(ask) || undefined} inert={behindSecret}>
            <AskView
              ask={ask}
              autoFocus={!behindSecret && focusTarget === ask.id}
              onAnswer={(tabAnswer) => answer(ask, tabAnswer)}
            />
          </div>
        ))}
      </fieldset>

      {toast && (
        <p
          role="status"
          className="rounded-lg bg-emerald-100 px-3 py-2 text-sm font-medium text-emerald-900 dark:bg-emerald-900/60 dark:text-emerald-100"
        >
          {toast}
        </p>
      )}

      {state.moved && state.pending.length === 0 && !state.superseded && (
        <div className="flex flex-wrap items-center gap-x-3 gap-y-2 rounded-xl border border-dashed border-zinc-300 px-3 py-2 text-sm dark:border-zinc-600">
          <p className="flex-1">
            <span className="font-medium">Moved to a newer tab</span>
            <span className={muted}> — it is open in another tab of this chat now.</span>
          </p>
          <button
            type="button"
            className={cx(secondaryButton, "min-h-8 py-1")}
            onClick={() => socket && viewAgain(socket)}
          >
            Show here
          </button>
        </div>
      )}

      <div
        ref={statusRef}
        tabIndex={-1}
        className="flex flex-wrap items-center gap-x-3 gap-y-1 px-1 text-xs outline-none"
      >
        {problem ? (
          <p role="alert" className="font-medium text-rose-700 dark:text-rose-300">
            {problem}
          </p>
        ) : (
          <span role="status">{showStatus && <StatusPill view={status} />}</span>
        )}
      </div>
    </main>
  );
}
