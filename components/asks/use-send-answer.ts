import { useState } from "react";
import type { TabAnswer } from "../../lib/protocol.ts";
import type { SubmitAnswer } from "./types.ts";

/**
 * A card's one answer in flight: `busy` while it is sent, `error` when it is refused. On success the
 * ask closes (ask:close / ask:changed) and the card goes away, so busy is never reset then.
 */
export function useSendAnswer(onAnswer: SubmitAnswer) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const send = async (answer: TabAnswer) => {
    if (busy) return;
    setBusy(true);
    setError(null);
    const result = await onAnswer(answer);
    if (!result.ok) {
      setError(result.error.message);
      setBusy(false);
    }
  };
  return { busy, error, setError, send };
}
