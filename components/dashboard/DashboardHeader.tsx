import type { PushOptIn } from "../../client/use-push-opt-in.ts";
import { cx } from "../asks/format.ts";
import { StatusPill, type StatusView } from "../common/ConnectionStatus.tsx";
import type { DesktopNotifications } from "./use-desktop-notifications.ts";

const toggleButton =
  "min-h-11 rounded-lg px-2.5 py-1.5 text-sm font-medium text-sky-800 hover:bg-sky-50 dark:text-sky-300 dark:hover:bg-sky-950/60";

/**
 * The dashboard's title bar: the connection's status, the switch for notifications on this device
 * (Web Push where the browser has it, else desktop notifications while the tab is hidden), and the
 * keyboard help.
 */
export function DashboardHeader({
  status,
  push,
  notifications,
  onHelp,
}: {
  status: StatusView;
  push: PushOptIn;
  notifications: DesktopNotifications;
  onHelp: () => void;
}) {
  return (
    <header className="border-b border-zinc-200 bg-white dark:border-zinc-800 dark:bg-zinc-900">
      <div className="mx-auto flex max-w-6xl flex-wrap items-center gap-x-4 gap-y-2 px-4 py-3">
        <h1 className="inline-flex items-center gap-2 text-lg font-semibold">
          <svg
            aria-hidden="true"
            viewBox="0 0 24 24"
            className="size-6 text-sky-700 dark:text-sky-400"
            fill="none"
            stroke="currentColor"
            strokeWidth="2"
            strokeLinecap="round"
            strokeLinejoin="round"
          >
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
              className={cx(toggleButton, "disabled:opacity-60")}
            >
              {push.enabled ? "Push to this device on" : "Push to this device"}
            </button>
          )}
          {notifications.supported && !push.supported && (
            <button
              type="button"
              aria-pressed={notifications.enabled}
              onClick={() => void notifications.toggle()}
              className={toggleButton}
            >
              {notifications.enabled ? "Desktop notifications on" : "Enable desktop notifications"}
            </button>
          )}
          <button
            type="button"
            aria-label="Keyboard shortcuts"
            aria-haspopup="dialog"
            onClick={onHelp}
            className="inline-flex size-11 items-center justify-center rounded-lg font-mono text-base font-semibold text-sky-800 hover:bg-sky-50 dark:text-sky-300 dark:hover:bg-sky-950/60"
          >
            ?
          </button>
        </div>
      </div>
    </header>
  );
}
