import { useCallback, useMemo, useReducer, useState } from "react";
import { request, type TabClientSocket } from "../../client/socket.ts";
import { useTabSession } from "../../client/use-tab-session.ts";
import type { Ask } from "../../lib/ask.ts";
import { useLatest } from "../common/use-latest.ts";
import {
  type DashboardAction,
  dashboardReducer,
  EMPTY_DASHBOARD,
  finishedAsks,
  pendingAsks,
} from "./dashboard-state.ts";

const TOKEN_KEY = "openclaw-asks:token";
/** A device link's token, kept by the installed app (client/token.ts). */
const DEVICE_TOKEN_KEY = "openclaw-asks:device-token";

export type AskFeedOptions = {
  /** Runs before every change of the asks (the inbox measures where its focused row is on screen). */
  beforeChange: () => void;
  /** A pending ask first heard of after the list, live (desktop notifications). */
  arrived: (ask: Ask) => void;
};

/**
 * The dashboard's feed: its tab session, and every ask it may see. On each (re)connect it watches,
 * then lists once (`asks:list {status: "all"}`); the live `ask:changed` events keep both the pending
 * asks and the history current after that, so neither view lists again.
 */
export function useAskFeed(options: AskFeedOptions) {
  const [state, dispatchNow] = useReducer(dashboardReducer, EMPTY_DASHBOARD);
  const [accessError, setAccessError] = useState<string | null>(null);
  /** Open WebUI's titles of the chats (chat id → title), as the server learns them. */
  const [chatTitles, setChatTitles] = useState<ReadonlyMap<string, string>>(new Map());
  const latest = useLatest(options);

  const setup = useCallback(
    (socket: TabClientSocket) => {
      const seenPending = new Set<string>();
      let listed = false;
      const dispatch = (action: DashboardAction) => {
        latest.current.beforeChange();
        dispatchNow(action);
      };
      const addTitles = (titles: Record<string, string> | undefined) => {
        if (titles && Object.keys(titles).length > 0)
          setChatTitles((current) => new Map([...current, ...Object.entries(titles)]));
      };
      const load = async () => {
        listed = false;
        const watch = await request(socket, "asks:watch", {});
        if (!watch.ok) {
          setAccessError(
            watch.error.code === "FORBIDDEN"
              ? "This link is not an owner's: the dashboard is for owners only."
              : watch.error.message,
          );
          return;
        }
        setAccessError(null);
        const all = await request(socket, "asks:list", { status: "all" });
        if (all.ok) {
          for (const ask of all.asks) if (ask.status === "pending") seenPending.add(ask.id);
          addTitles(all.chatTitles);
          dispatch({ type: "listed", asks: all.asks });
        }
        listed = true;
      };
      socket.on("connect", () => void load());
      socket.on("chat:title", ({ chatId, title }) => addTitles({ [chatId]: title }));
      socket.on("ask:changed", (ask) => {
        if (ask.status === "pending" && !seenPending.has(ask.id)) {
          seenPending.add(ask.id);
          if (listed) latest.current.arrived(ask);
        }
        dispatch({ type: "changed", ask });
      });
    },
    [latest],
  );

  const session = useTabSession({
    sessionStorageKey: TOKEN_KEY,
    deviceStorageKey: DEVICE_TOKEN_KEY,
    relink: "Open the dashboard with a fresh link from the server (npm start prints one).",
    setup,
  });
  const pending = useMemo(() => pendingAsks(state), [state]);
  const finished = useMemo(() => finishedAsks(state), [state]);

  return { ...session, pending, finished, chatTitles, accessError };
}
