import type { Ask } from "../../lib/ask.ts";

/**
 * The dashboard's view of every ask it has heard of, from its `asks:list` on each (re)connect and the
 * live `ask:changed` feed. Terminal states are tombstones here too: a late or replayed pending copy
 * never brings an ask back.
 */

export type DashboardState = { asks: Readonly<Record<string, Ask>> };

export type DashboardAction =
  | { type: "changed"; ask: Ask }
  /** `asks:list {status: "all"}` after a (re)connect: the pending set, and the history. */
  | { type: "listed"; asks: Ask[] };

export const EMPTY_DASHBOARD: DashboardState = { asks: {} };

function accept(existing: Ask | undefined, incoming: Ask): boolean {
  if (!existing) return true;
  if (existing.status !== "pending" && incoming.status === "pending") return false;
  return true;
}

export function dashboardReducer(state: DashboardState, action: DashboardAction): DashboardState {
  switch (action.type) {
    case "changed": {
      if (!accept(state.asks[action.ask.id], action.ask)) return state;
      return { asks: { ...state.asks, [action.ask.id]: action.ask } };
    }
    case "listed": {
      const listed = new Set(action.asks.map((ask) => ask.id));
      const asks: Record<string, Ask> = {};
      // A pending ask the server no longer lists ended while this page was away.
      for (const [id, ask] of Object.entries(state.asks))
        if (ask.status !== "pending" || listed.has(id)) asks[id] = ask;
      for (const ask of action.asks) if (accept(asks[ask.id], ask)) asks[ask.id] = ask;
      return { asks };
    }
  }
}

const isCritical = (ask: Ask) => ask.kind === "approval" && ask.approval.severity === "critical";
const deadline = (ask: Ask) => ask.expiresAt ?? Number.POSITIVE_INFINITY;

/**
 * The inbox order, most urgent first: critical approvals, then the soonest expiry (asks without a
 * deadline last), then the oldest. The id breaks ties so the order never flickers.
 */
export function byUrgency(a: Ask, b: Ask): number {
  return (
    Number(isCritical(b)) - Number(isCritical(a)) ||
    deadline(a) - deadline(b) ||
    a.createdAt - b.createdAt ||
    a.id.localeCompare(b.id)
  );
}

export function pendingAsks(state: DashboardState): Ask[] {
  return Object.values(state.asks)
    .filter((ask) => ask.status === "pending")
    .sort(byUrgency);
}

export function finishedAsks(state: DashboardState): Ask[] {
  return Object.values(state.asks)
    .filter((ask) => ask.status !== "pending")
    .sort((a, b) => (b.resolution?.at ?? b.createdAt) - (a.resolution?.at ?? a.createdAt));
}
