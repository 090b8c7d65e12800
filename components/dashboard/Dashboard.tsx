"use client";

import { type KeyboardEvent, type ReactNode, useCallback, useId, useState } from "react";
import { usePushOptIn } from "../../client/use-push-opt-in.ts";
import { secretOutcomeToast } from "../../lib/wording.ts";
import { cx } from "../asks/format.ts";
import { muted } from "../asks/styles.ts";
import { describeStatus } from "../common/ConnectionStatus.tsx";
import { useToast } from "../common/use-toast.ts";
import { DashboardHeader } from "./DashboardHeader.tsx";
import { DevicesPanel } from "./DevicesPanel.tsx";
import { HistoryPanel } from "./HistoryPanel.tsx";
import { InboxPanel } from "./InboxPanel.tsx";
import { KeyboardHelp } from "./KeyboardHelp.tsx";
import { useAskFeed } from "./use-ask-feed.ts";
import { useDesktopNotifications } from "./use-desktop-notifications.ts";
import { useKeptFocus } from "./use-kept-focus.ts";

const VIEWS = ["pending", "history", "devices"] as const;
type View = (typeof VIEWS)[number];

/**
 * The owners' dashboard (docs/ARCHITECTURE.md#user-interface): the inbox of every pending ask across chats, most urgent first;
 * the history of finished asks with its filters; the devices signed in; the Gateway's status; and
 * opt-in notifications for asks that arrive while the tab is hidden. One feed (use-ask-feed.ts)
 * serves the inbox and the history.
 */
export function Dashboard({ openWebUiUrl }: { openWebUiUrl: string | null }) {
  const kept = useKeptFocus();
  const notifications = useDesktopNotifications();
  // Every change of the list keeps the focused row where it is on screen (new asks may sort above it).
  const feed = useAskFeed({ beforeChange: kept.measure, arrived: notifications.notify });
  const push = usePushOptIn(feed.token);
  const [view, setView] = useState<View>("pending");
  const [toast, setToast] = useToast();
  const [modalOpen, setModalOpen] = useState(false);
  const [helpOpen, setHelpOpen] = useState(false);
  const baseId = useId();
  const showInbox = useCallback(() => setView("pending"), []);
  const openHelp = useCallback(() => setHelpOpen(true), []);

  const problem = feed.problem ?? feed.accessError;
  const tabs: { id: View; label: string; count?: number }[] = [
    { id: "pending", label: "Pending", count: feed.pending.length },
    { id: "history", label: "History" },
    { id: "devices", label: "Devices" },
  ];
  const onTabKey = (event: KeyboardEvent<HTMLButtonElement>) => {
    if (
      event.key !== "ArrowRight" &&
      event.key !== "ArrowLeft" &&
      event.key !== "Home" &&
      event.key !== "End"
    )
      return;
    event.preventDefault();
    const at = VIEWS.indexOf(view);
    const next: View =
      event.key === "Home"
        ? VIEWS[0]
        : event.key === "End"
          ? VIEWS[VIEWS.length - 1]!
          : VIEWS[(at + (event.key === "ArrowRight" ? 1 : VIEWS.length - 1)) % VIEWS.length]!;
    setView(next);
    document.getElementById(`${baseId}-tab-${next}`)?.focus();
  };
  const panelProps = (id: View) => ({
    id: `${baseId}-panel-${id}`,
    tabId: `${baseId}-tab-${id}`,
    hidden: view !== id,
  });

  return (
    <div className="min-h-dvh bg-zinc-50 font-sans text-zinc-900 dark:bg-zinc-950 dark:text-zinc-100">
      <div inert={modalOpen || undefined}>
        <DashboardHeader
          status={describeStatus(feed.connection, feed.gateway)}
          push={push}
          notifications={notifications}
          onHelp={openHelp}
        />

        <main className="mx-auto max-w-6xl px-3 py-4 sm:px-4">
          {problem && (
            <p
              role="alert"
              className="mb-4 rounded-xl border border-rose-300 bg-rose-50 px-4 py-3 text-sm font-medium text-rose-800 dark:border-rose-700 dark:bg-rose-950/60 dark:text-rose-200"
            >
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

          <div
            role="tablist"
            aria-label="Views"
            className="mb-4 flex gap-1 border-b border-zinc-200 dark:border-zinc-800"
          >
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
                onClick={() => setView(tab.id)}
                className={cx(
                  "-mb-px inline-flex min-h-11 items-center gap-2 border-b-2 px-3 py-2 text-sm font-medium",
                  view === tab.id
                    ? "border-sky-700 text-sky-900 dark:border-sky-400 dark:text-sky-100"
                    : "border-transparent text-zinc-600 hover:text-zinc-900 dark:text-zinc-400 dark:hover:text-zinc-100",
                )}
              >
                {tab.label}
                {tab.count !== undefined && (
                  <span className="rounded-full bg-zinc-200 px-1.5 text-xs tabular-nums dark:bg-zinc-800">
                    {tab.count}
                  </span>
                )}
              </button>
            ))}
          </div>

          <TabPanel {...panelProps("pending")} title="Pending asks">
            <InboxPanel
              pending={feed.pending}
              answer={feed.answer}
              kept={kept}
              active={view === "pending"}
              ready={feed.connection.phase === "connected" && !problem}
              openWebUiUrl={openWebUiUrl}
              chatTitles={feed.chatTitles}
              onHelp={openHelp}
              onReveal={showInbox}
              onModal={setModalOpen}
              onSecretOutcome={(outcome) => setToast(secretOutcomeToast(outcome))}
            />
          </TabPanel>
          <TabPanel {...panelProps("history")} title="History">
            <HistoryPanel finished={feed.finished} chatTitles={feed.chatTitles} />
          </TabPanel>
          <TabPanel {...panelProps("devices")} title="Devices">
            <DevicesPanel token={feed.token} active={view === "devices"} />
          </TabPanel>
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

/** A view's panel, named for screen readers by its heading and its tab. */
function TabPanel({
  id,
  tabId,
  hidden,
  title,
  children,
}: {
  id: string;
  tabId: string;
  hidden: boolean;
  title: string;
  children: ReactNode;
}) {
  return (
    <section id={id} role="tabpanel" aria-labelledby={tabId} hidden={hidden}>
      <h2 className="sr-only">{title}</h2>
      {children}
    </section>
  );
}
