"use client";

import { useCallback, useEffect, useId, useLayoutEffect, useMemo, useReducer, useRef, useState, type KeyboardEvent } from "react";
import type { TabAnswer } from "../../lib/protocol.ts";
import { request, type TabClientSocket } from "../../client/socket.ts";
import { useTabSession } from "../../client/use-tab-session.ts";
import { askTitle, secretOutcomeToast } from "../../lib/wording.ts";
import { cx } from "../asks/format.ts";
import { dangerButton, muted } from "../asks/styles.ts";
import { useToast } from "../common/use-toast.ts";
import { StatusPill, describeStatus } from "../common/ConnectionStatus.tsx";
import { EMPTY_DASHBOARD, dashboardReducer, finishedAsks, pendingAsks, type DashboardAction } from "./dashboard-state.ts";
import { DevicesPanel } from "./DevicesPanel.tsx";
import { HistoryFilters } from "./HistoryFilters.tsx";
import { HistoryTable } from "./HistoryTable.tsx";
import { InboxRow } from "./InboxRow.tsx";
import { NO_FILTER, historyChats, matchesHistoryFilter, type HistoryFilter } from "./inbox-model.ts";
import { KeyboardHelp } from "./KeyboardHelp.tsx";
import { useDesktopNotifications } from "./use-desktop-notifications.ts";
import { useInboxKeys } from "./use-inbox-keys.ts";
import { usePushOptIn } from "../../client/use-push-opt-in.ts";
import { useKeptFocus } from "./use-kept-focus.ts";

const TOKEN_KEY = "openclaw-asks:token";
/** A device link's token, kept by the installed app (client/token.ts). */
const DEVICE_TOKEN_KEY = "openclaw-asks:device-token";

const VIEWS = ["pending", "history", "devices"] as const;
type View = (typeof VIEWS)[number];

/**
 * The owners' dashboard (DESIGN §11): an inbox of every pending ask across chats, most urgent first,
 * as compact rows that open in place to the same cards the widget shows, with keyboard triage and
 * bulk deny/cancel; the history of finished asks with its filters; the Gateway's status; and opt-in
 * desktop notifications for asks that arrive while the tab is hidden.
 */
/** A copy of `set` that holds `id` or not (React state is never changed in place). */
function withMember(set: ReadonlySet<string>, id: string, member: boolean): Set<string> {
  const next = new Set(set);
  if (member) next.add(id);
  else next.delete(id);
  return next;
}

export function Dashboard({ openWebUiUrl }: { openWebUiUrl: string | null }) {
  const [state, dispatchNow] = useReducer(dashboardReducer, EMPTY_DASHBOARD);
  const kept = useKeptFocus();
  // Every change of the list keeps the focused row where it is on screen (new asks may sort above it).
  const dispatch = useCallback(
    (action: DashboardAction) => {
      kept.measure();
      dispatchNow(action);
    },
    [kept],
  );
  const [view, setView] = useState<View>("pending");
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [accessError, setAccessError] = useState<string | null>(null);
  const [bulkMessage, setBulkMessage] = useState<string | null>(null);
  const [bulkBusy, setBulkBusy] = useState(false);
  const [toast, setToast] = useToast();
  const [modalOpen, setModalOpen] = useState(false);
  const [helpOpen, setHelpOpen] = useState(false);
  const [expanded, setExpanded] = useState<ReadonlySet<string>>(new Set());
  const [historyFilter, setHistoryFilter] = useState<HistoryFilter>(NO_FILTER);
  const pendingPick = useRef<{ id: string; digit: string } | null>(null);
  const notifications = useDesktopNotifications();
  const notifyRef = useRef(notifications.notify);
  notifyRef.current = notifications.notify;
  const seenPending = useRef(new Set<string>());
  /** Open WebUI's titles of the chats (chat id → title), as the server learns them. */
  const [chatTitles, setChatTitles] = useState<ReadonlyMap<string, string>>(new Map());
  const addTitles = useCallback((titles: Record<string, string> | undefined) => {
    if (titles && Object.keys(titles).length > 0) setChatTitles((current) => new Map([...current, ...Object.entries(titles)]));
  }, []);
  const listed = useRef(false);
  const baseId = useId();

  const setup = useCallback((socket: TabClientSocket) => {
    const load = async () => {
      listed.current = false;
      const watch = await request(socket, (timed) => timed.emitWithAck("asks:watch", {}));
      if (!watch.ok) {
        setAccessError(watch.error.code === "FORBIDDEN" ? "This link is not an owner's: the dashboard is for owners only." : watch.error.message);
        return;
      }
      setAccessError(null);
      const pending = await request(socket, (timed) => timed.emitWithAck("asks:list", { status: "pending" }));
      if (pending.ok) {
        for (const ask of pending.asks) seenPending.current.add(ask.id);
        addTitles(pending.chatTitles);
        dispatch({ type: "pending-list", asks: pending.asks });
      }
      listed.current = true;
      const all = await request(socket, (timed) => timed.emitWithAck("asks:list", { status: "all" }));
      if (all.ok) {
        addTitles(all.chatTitles);
        dispatch({ type: "all-list", asks: all.asks });
      }
    };
    socket.on("connect", () => void load());
    socket.on("chat:title", ({ chatId, title }) => addTitles({ [chatId]: title }));
    socket.on("ask:changed", (ask) => {
      if (ask.status === "pending" && !seenPending.current.has(ask.id)) {
        seenPending.current.add(ask.id);
        if (listed.current) notifyRef.current(ask);
      }
      dispatch({ type: "changed", ask });
    });
  }, [dispatch, addTitles]);

  const { socket, connection, gateway, answer, tokenProblem, token } = useTabSession({
    sessionStorageKey: TOKEN_KEY,
    deviceStorageKey: DEVICE_TOKEN_KEY,
    relink: "Open the dashboard with a fresh link from the server (npm start prints one).",
    setup,
  });

  const push = usePushOptIn(token);

  // A notification opens the dashboard at its ask (`/#ask=<id>`): that row opens and takes the focus
  // once the ask is listed.
  const openAt = useRef<string | null>(null);
  useEffect(() => {
    const read = () => {
      const match = /^#ask=(.+)$/.exec(window.location.hash);
      if (!match?.[1]) return;
      // An address that is not valid percent-encoding (typed or crafted) opens nothing; it must not throw.
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

  const pending = useMemo(() => pendingAsks(state), [state]);
  const finished = useMemo(() => finishedAsks(state), [state]);
  const shownHistory = useMemo(() => finished.filter((ask) => matchesHistoryFilter(ask, historyFilter)), [finished, historyFilter]);
  const chats = useMemo(() => historyChats(finished), [finished]);

  // Selection and open rows only ever hold pending asks.
  useEffect(() => {
    const live = (current: ReadonlySet<string>) => {
      const still = new Set([...current].filter((id) => state.asks[id]?.status === "pending"));
      return still.size === current.size ? current : still;
    };
    setSelected(live);
    setExpanded(live);
  }, [state]);

  useLayoutEffect(() => kept.restore(pending.map((ask) => ask.id)), [kept, pending]);

  useEffect(() => {
    const id = openAt.current;
    if (!id || !pending.some((ask) => ask.id === id)) return;
    openAt.current = null;
    setView("pending");
    setExpanded((current) => new Set(current).add(id));
    kept.focusRow(id);
  }, [pending, kept]);

  // A number pressed on a closed row opens it, then goes to its card, which picks the option.
  useEffect(() => {
    const pick = pendingPick.current;
    if (!pick || !expanded.has(pick.id)) return;
    pendingPick.current = null;
    const cardRoot = document.querySelector<HTMLElement>(`[data-inbox-row="${CSS.escape(pick.id)}"] [data-row-panel] [data-ask-id]`);
    if (!cardRoot) return;
    cardRoot.focus();
    cardRoot.dispatchEvent(new KeyboardEvent("keydown", { key: pick.digit, bubbles: true, cancelable: true }));
  }, [expanded]);

  const setRowExpanded = (id: string, open: boolean) => setExpanded((current) => withMember(current, id, open));

  const triage = async (id: string, tabAnswer: TabAnswer, done: string) => {
    const ask = state.asks[id];
    const result = await answer(id, tabAnswer);
    const title = ask ? askTitle(ask) : "The ask";
    setBulkMessage(result.ok ? `${done}: ${title}` : `${title}: ${result.error.message}`);
  };

  useInboxKeys(view === "pending", {
    help: () => setHelpOpen(true),
    move: (row, step) => {
      const index = row === null ? -1 : pending.findIndex((ask) => ask.id === row);
      const next = pending[index < 0 ? (step === 1 ? 0 : pending.length - 1) : Math.min(Math.max(index + step, 0), pending.length - 1)];
      if (next) kept.focusRow(next.id);
    },
    deny: (row) => void triage(row, { type: "cancel" }, state.asks[row]?.kind === "approval" ? "Denied" : "Cancelled"),
    allow: (row) => {
      const ask = state.asks[row];
      if (ask?.kind !== "approval" || !ask.approval.decisions.includes("allow-once")) {
        setBulkMessage("Only an approval that offers Allow once can be allowed with a.");
        return;
      }
      void triage(row, { type: "decision", decision: "allow-once" }, "Allowed once");
    },
    pick: (row, digit) => {
      pendingPick.current = { id: row, digit };
      setExpanded((current) => new Set(current).add(row));
    },
  });

  const refreshHistory = useCallback(() => {
    if (!socket) return;
    void request(socket, (timed) => timed.emitWithAck("asks:list", { status: "all" })).then((all) => {
      if (!all.ok) return;
      addTitles(all.chatTitles);
      dispatch({ type: "all-list", asks: all.asks });
    });
  }, [socket, addTitles]);

  const toggle = (id: string, on: boolean) => setSelected((current) => withMember(current, id, on));

  const bulkCancel = async () => {
    const ids = [...selected];
    if (ids.length === 0 || bulkBusy) return;
    setBulkBusy(true);
    setBulkMessage(null);
    const results = await Promise.all(ids.map(async (id) => ({ id, result: await answer(id, { type: "cancel" }) })));
    const failed = results.filter((item) => !item.result.ok);
    const done = results.length - failed.length;
    const parts = [];
    if (done > 0) parts.push(`${done} ${done === 1 ? "ask" : "asks"} denied or cancelled.`);
    for (const item of failed) {
      const ask = state.asks[item.id];
      if (!item.result.ok) parts.push(`${ask ? askTitle(ask) : "An ask"}: ${item.result.error.message}`);
    }
    setBulkMessage(parts.join(" "));
    setSelected(new Set());
    setBulkBusy(false);
  };

  const status = describeStatus(connection, gateway);
  const allSelected = pending.length > 0 && pending.every((ask) => selected.has(ask.id));
  const someSelected = selected.size > 0 && !allSelected;
  const problem = tokenProblem ?? accessError;

  const tabs: { id: View; label: string; count?: number }[] = [
    { id: "pending", label: "Pending", count: pending.length },
    { id: "history", label: "History" },
    { id: "devices", label: "Devices" },
  ];
  const onTabKey = (event: KeyboardEvent<HTMLButtonElement>) => {
    if (event.key !== "ArrowRight" && event.key !== "ArrowLeft" && event.key !== "Home" && event.key !== "End") return;
    event.preventDefault();
    const at = VIEWS.indexOf(view);
    const next: View =
      event.key === "Home" ? VIEWS[0] : event.key === "End" ? VIEWS[VIEWS.length - 1]! : VIEWS[(at + (event.key === "ArrowRight" ? 1 : VIEWS.length - 1)) % VIEWS.length]!;
    setView(next);
    if (next === "history") refreshHistory();
    document.getElementById(`${baseId}-tab-${next}`)?.focus();
  };

  return (
    <div className="min-h-dvh bg-zinc-50 font-sans text-zinc-900 dark:bg-zinc-950 dark:text-zinc-100">
      <div inert={modalOpen || undefined}>
        <header className="border-b border-zinc-200 bg-white dark:border-zinc-800 dark:bg-zinc-900">
          <div className="mx-auto flex max-w-6xl flex-wrap items-center gap-x-4 gap-y-2 px-4 py-3">
            <h1 className="inline-flex items-center gap-2 text-lg font-semibold">
              <svg aria-hidden="true" viewBox="0 0 24 24" className="size-6 text-sky-700 dark:text-sky-400" fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round" strokeLinejoin="round">
                <path d="M21 12a8 8 0 0 1-11.8 7L4 20l1-4.6A8 8 0 1 1 21 12Z" />
                <path d="M9.8 9.5a2.3 2.3 0 0 1 4.4.9c0 1.5-2.2 2-2.2 3.1M12 16.5h.01" />
              </svg>
              OpenClaw Asks
            </h1>
            <span role="status" className="min-w-0">
              <StatusPill view={status} />
            </span>
            <div className="ms-auto flex items-center gap-1">
              {push.supported && (
                <button
                  type="button"
                  aria-pressed={push.enabled}
                  disabled={push.busy}
                  onClick={() => void push.toggle()}
                  className="min-h-11 rounded-lg px-2.5 py-1.5 text-sm font-medium text-sky-800 hover:bg-sky-50 disabled:opacity-60 dark:text-sky-300 dark:hover:bg-sky-950/60"
                >
                  {push.enabled ? "Push to this device on" : "Push to this device"}
                </button>
              )}
              {notifications.supported && !push.supported && (
                <button
                  type="button"
                  aria-pressed={notifications.enabled}
                  onClick={() => void notifications.toggle()}
                  className="min-h-11 rounded-lg px-2.5 py-1.5 text-sm font-medium text-sky-800 hover:bg-sky-50 dark:text-sky-300 dark:hover:bg-sky-950/60"
                >
                  {notifications.enabled ? "Desktop notifications on" : "Enable desktop notifications"}
                </button>
              )}
              <button
                type="button"
                aria-label="Keyboard shortcuts"
                aria-haspopup="dialog"
                onClick={() => setHelpOpen(true)}
                className="inline-flex size-11 items-center justify-center rounded-lg font-mono text-base font-semibold text-sky-800 hover:bg-sky-50 dark:text-sky-300 dark:hover:bg-sky-950/60"
              >
                ?
              </button>
            </div>
          </div>
        </header>

        <main className="mx-auto max-w-6xl px-3 py-4 sm:px-4">
          {problem && (
            <p role="alert" className="mb-4 rounded-xl border border-rose-300 bg-rose-50 px-4 py-3 text-sm font-medium text-rose-800 dark:border-rose-700 dark:bg-rose-950/60 dark:text-rose-200">
              {problem}
            </p>
          )}
          {push.error && (
            <p role="status" className={cx("mb-3 text-sm", muted)}>
              {push.error}
            </p>
          )}
          {notifications.error && (
            <p role="status" className={cx("mb-3 text-sm", muted)}>
              {notifications.error}
            </p>
          )}

          <div role="tablist" aria-label="Views" className="mb-4 flex gap-1 border-b border-zinc-200 dark:border-zinc-800">
            {tabs.map((tab) => (
              <button
                key={tab.id}
                id={`${baseId}-tab-${tab.id}`}
                type="button"
                role="tab"
                aria-selected={view === tab.id}
                aria-controls={`${baseId}-panel-${tab.id}`}
                tabIndex={view === tab.id ? 0 : -1}
                onKeyDown={onTabKey}
                onClick={() => {
                  setView(tab.id);
                  if (tab.id === "history") refreshHistory();
                }}
                className={cx(
                  "-mb-px inline-flex min-h-11 items-center gap-2 border-b-2 px-3 py-2 text-sm font-medium",
                  view === tab.id
                    ? "border-sky-700 text-sky-900 dark:border-sky-400 dark:text-sky-100"
                    : "border-transparent text-zinc-600 hover:text-zinc-900 dark:text-zinc-400 dark:hover:text-zinc-100",
                )}
              >
                {tab.label}
                {tab.count !== undefined && (
                  <span className="rounded-full bg-zinc-200 px-1.5 text-xs tabular-nums dark:bg-zinc-800">{tab.count}</span>
                )}
              </button>
            ))}
          </div>

          <section id={`${baseId}-panel-pending`} role="tabpanel" aria-labelledby={`${baseId}-tab-pending`} hidden={view !== "pending"}>
            <h2 className="sr-only">Pending asks</h2>
            {pending.length > 0 && (
              <div className="mb-3 flex flex-wrap items-center gap-x-4 gap-y-2 rounded-xl border border-zinc-200 bg-white px-3 py-2 dark:border-zinc-800 dark:bg-zinc-900">
                <label className="inline-flex min-h-11 items-center gap-2 text-sm">
                  <input
                    type="checkbox"
                    checked={allSelected}
                    ref={(element) => {
                      if (element) element.indeterminate = someSelected;
                    }}
                    onChange={(event) => setSelected(event.target.checked ? new Set(pending.map((ask) => ask.id)) : new Set())}
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
              {bulkMessage}
            </p>
            {pending.length === 0 ? (
              <p
                ref={kept.emptyRef}
                tabIndex={-1}
                className={cx("rounded-xl border border-dashed border-zinc-300 px-4 py-8 text-center text-sm dark:border-zinc-700", muted)}
              >
                {connection.phase === "connected" && !problem ? "Nothing pending" : "—"}
              </p>
            ) : (
              <ul aria-label="Pending asks" onFocus={kept.onFocus} className="flex flex-col gap-2 [overflow-anchor:none]">
                {pending.map((ask) => (
                  <InboxRow
                    key={ask.id}
                    ask={ask}
                    expanded={expanded.has(ask.id)}
                    onExpand={(open) => setRowExpanded(ask.id, open)}
                    selected={selected.has(ask.id)}
                    onSelect={(on) => toggle(ask.id, on)}
                    onAnswer={(tabAnswer) => answer(ask.id, tabAnswer)}
                    openWebUiUrl={openWebUiUrl}
                    chatTitle={ask.chatId === null ? undefined : chatTitles.get(ask.chatId)}
                    onModal={setModalOpen}
                    onSecretOutcome={(outcome) => setToast(secretOutcomeToast(outcome))}
                  />
                ))}
              </ul>
            )}
            <p className={cx("mt-3 hidden text-xs sm:block", muted)}>
              Press <kbd className="font-mono">?</kbd> for keyboard shortcuts.
            </p>
          </section>

          <section id={`${baseId}-panel-history`} role="tabpanel" aria-labelledby={`${baseId}-tab-history`} hidden={view !== "history"}>
            <h2 className="sr-only">History</h2>
            <HistoryFilters filter={historyFilter} chats={chats} onChange={setHistoryFilter} shown={shownHistory.length} total={finished.length} />
            <HistoryTable asks={shownHistory} chatTitles={chatTitles} filtered={shownHistory.length !== finished.length} />
          </section>

          <section id={`${baseId}-panel-devices`} role="tabpanel" aria-labelledby={`${baseId}-tab-devices`} hidden={view !== "devices"}>
            <h2 className="sr-only">Devices</h2>
            <DevicesPanel token={token} active={view === "devices"} />
          </section>
        </main>
      </div>

      <KeyboardHelp open={helpOpen} onClose={() => setHelpOpen(false)} />

      {toast && (
        <p
          role="status"
          className="fixed inset-x-4 bottom-4 mx-auto max-w-sm rounded-xl bg-zinc-900 px-4 py-3 text-center text-sm font-medium text-white shadow-lg dark:bg-zinc-100 dark:text-zinc-900"
        >
          {toast}
        </p>
      )}
    </div>
  );
}
