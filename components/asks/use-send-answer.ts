import { useRef, useState } from "react";
import type { AnswerAck, TabAnswer } from "../../lib/protocol.ts";
import type { SubmitAnswer } from "./types.ts";

type Accepted = Extract<AnswerAck, { ok: true }>;

/**
 * A card's one answer in flight, for every card and dialog: `busy` while it is sent, `error` when it
 * is refused. `send` resolves with the accepted ack, or null when it was refused or another answer
 * is already on its way. On success the ask closes (ask:close / ask:changed) and the card goes away,
 * so busy is never reset then.
 */
export function useSendAnswer(onAnswer: SubmitAnswer) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const inFlight = useRef(false);
  const send = async (answer: TabAnswer): Promise<Accepted | null> => {
    if (inFlight.current) return null;
    inFlight.current = true;
    setBusy(true);
    setError(null);
    const result = await onAnswer(answer);
    if (result.ok) return result;
    inFlight.current = false;
    setError(result.error.message);
    setBusy(false);
    return null;
  };
  return { busy, error, setError, send };
}
