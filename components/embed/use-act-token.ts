import { useCallback, useEffect, useRef, useState } from "react";

/** What the host page posts (the relay the Open WebUI filter runs there): a reply's act token. */
export const HOST_ACT = "openclaw-asks:act";
/** What the widget asks its host page for its reply's act token. */
export const HOST_ACT_QUERY = "openclaw-asks:act?";

/** How long after loading the widget waits for the host page's act token before it says it has none. */
const ACT_WAIT_MS = 1_000;
const MAX_TOKEN_LENGTH = 4_096;

function actTokenOf(data: unknown, replyId: string): string | null {
  if (typeof data !== "object" || data === null) return null;
  const { type, msg, token } = data as { type?: unknown; msg?: unknown; token?: unknown };
  if (type !== HOST_ACT || msg !== replyId || typeof token !== "string") return null;
  return token.length > 0 && token.length <= MAX_TOKEN_LENGTH ? token : null;
}

/**
 * The act token of this widget's reply (docs/SECURITY.md#a-stored-token-never-acts): the widget's own
 * token, in its URL, is stored on the message and copied into every share, so it never approves a
 * tool call or enters a secret; that needs the act token the filter hands the page that sent the message
 * (integrations/open-webui, ACT_RELAY_JS). It is asked for when the widget loads and taken only from
 * the host page, only for this reply, and kept in memory. `actToken(needed)` gives it; for an answer
 * that `needed` it (an approval, a secret) in the moment after loading it waits for the host page;
 * undefined when none came (a share, a reload of Open WebUI's page, another tab): the server then
 * refuses such an answer and says where to give it. Other answers never wait. `missing`: none came
 * within that moment, so the widget says so beside such asks.
 */
export function useActToken(replyId: string | null): {
  actToken: (needed: boolean) => Promise<string | undefined>;
  missing: boolean;
} {
  const token = useRef<string | undefined>(undefined);
  const waiters = useRef(new Set<(token: string) => void>());
  const [missing, setMissing] = useState(false);

  useEffect(() => {
    if (replyId === null) return;
    const onMessage = (event: MessageEvent) => {
      if (event.source !== window.parent) return;
      const act = actTokenOf(event.data, replyId);
      if (act === null) return;
      token.current = act;
      setMissing(false);
      for (const resolve of waiters.current) resolve(act);
      waiters.current.clear();
    };
    window.addEventListener("message", onMessage);
    window.parent.postMessage({ type: HOST_ACT_QUERY, msg: replyId }, "*");
    const noneCame = setTimeout(() => setMissing(token.current === undefined), ACT_WAIT_MS);
    return () => {
      clearTimeout(noneCame);
      window.removeEventListener("message", onMessage);
    };
  }, [replyId]);

  const actToken = useCallback(
    async (needed: boolean) => {
      if (token.current !== undefined || !needed || missing || replyId === null)
        return token.current;
      return new Promise<string | undefined>((resolve) => {
        const done = (act: string | undefined) => {
          clearTimeout(timer);
          waiters.current.delete(done);
          resolve(act);
        };
        const timer = setTimeout(() => done(undefined), ACT_WAIT_MS);
        waiters.current.add(done);
      });
    },
    [replyId, missing],
  );
  return { actToken, missing };
}
