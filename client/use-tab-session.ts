import { useCallback, useEffect, useState } from "react";
import type { TabAnswer } from "../lib/protocol.ts";
import { sendAnswer, type TabClientSocket } from "./socket.ts";
import { forgetToken, takeToken } from "./token.ts";
import { useTabSocket } from "./use-tab-socket.ts";

export type TabSessionOptions = {
  /** Also keep the token in sessionStorage under this key (the dashboard; the widget's sandbox has none). */
  sessionStorageKey?: string;
  /** Keep a device link's token in localStorage under this key (the dashboard, installed on a phone). */
  deviceStorageKey?: string;
  /** What to do for a new link, ending the messages about a missing or refused token. */
  relink: string;
  /** The page's listeners (see useTabSocket). */
  setup: (socket: TabClientSocket) => (() => void) | void;
};

/**
 * The start-up both pages share: take the signed token from `?token=` (then drop it from the address
 * bar), connect with it, forget it when the server refuses it (not when only a reload can help), say
 * what is wrong in one sentence, and send answers for the page's cards.
 */
export function useTabSession({
  sessionStorageKey,
  deviceStorageKey,
  relink,
  setup,
}: TabSessionOptions) {
  const [token, setToken] = useState<string | null>(null);
  const [tokenRead, setTokenRead] = useState(false);

  useEffect(() => {
    setToken(takeToken({ sessionStorageKey, deviceStorageKey }));
    setTokenRead(true);
  }, [sessionStorageKey, deviceStorageKey]);

  const { socket, state: connection, gateway } = useTabSocket(token, setup);

  useEffect(() => {
    if (connection.phase === "refused") forgetToken(token, { sessionStorageKey, deviceStorageKey });
  }, [connection.phase, token, sessionStorageKey, deviceStorageKey]);

  /** `act`: a widget's act token (components/embed/use-act-token.ts); a dashboard needs none. */
  const answer = useCallback(
    (askId: string, tabAnswer: TabAnswer, act?: string) =>
      sendAnswer(socket, askId, tabAnswer, act),
    [socket],
  );

  /** What keeps the page from working, in one sentence that says what to do; null when nothing does. */
  const problem = !tokenRead
    ? null
    : !token
      ? `This link has no token. ${relink}`
      : connection.phase === "refused"
        ? `Not connected: ${connection.error}. ${relink}`
        : connection.phase === "outdated"
          ? `Not connected: ${connection.error}.`
          : null;

  return { socket, connection, gateway, answer, problem, token };
}
