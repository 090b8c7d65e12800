import type { ConnectionState } from "../../client/use-tab-socket.ts";
import type { InstanceStatus } from "../../lib/protocol.ts";
import { cx } from "../asks/format.ts";

export type StatusView = { tone: "ok" | "busy" | "warn" | "error"; text: string };

/** One line for the page's connection and the Gateway's: what the person needs to know. */
export function describeStatus(state: ConnectionState, gateway: InstanceStatus | null): StatusView {
  switch (state.phase) {
    case "idle":
    case "connecting":
      return { tone: "busy", text: "Connecting…" };
    case "refused":
      return { tone: "error", text: `Not connected: ${state.error}` };
    case "outdated":
      return { tone: "error", text: "Out of date: reload the page" };
    case "reconnecting":
      return { tone: "warn", text: "Connection lost, reconnecting…" };
    case "connected":
      if (!gateway) return { tone: "busy", text: "Connecting…" };
      if (gateway.degraded) return { tone: "warn", text: gateway.degraded };
      return gateway.connected
        ? { tone: "ok", text: "Gateway connected" }
        : { tone: "warn", text: "Gateway unreachable, retrying" };
  }
}

const DOT: Record<StatusView["tone"], string> = {
  ok: "bg-emerald-500",
  busy: "bg-zinc-400 animate-pulse",
  warn: "bg-amber-500",
  error: "bg-rose-600",
};

const TEXT: Record<StatusView["tone"], string> = {
  ok: "text-zinc-600 dark:text-zinc-400",
  busy: "text-zinc-600 dark:text-zinc-400",
  warn: "text-amber-800 dark:text-amber-300",
  error: "text-rose-700 dark:text-rose-300",
};

export function StatusPill({ view, className }: { view: StatusView; className?: string }) {
  return (
    <span
      className={cx(
        "inline-flex items-center gap-1.5 text-xs font-medium",
        TEXT[view.tone],
        className,
      )}
    >
      <span aria-hidden="true" className={cx("size-2 shrink-0 rounded-full", DOT[view.tone])} />
      {view.text}
    </span>
  );
}
