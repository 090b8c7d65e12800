import type { Ask, AskKind, AskStatus } from "../../lib/ask.ts";
import type { AskClose } from "../../lib/protocol.ts";
import { askQuestionText, askTitle, CLOSE_OUTCOMES } from "../../lib/wording.ts";

/**
 * What the widget holds: the cards the server routed to it, and the record of each ask
 * that finished here. A card the person answered leaves the cards for the record at once, as a line
 * "Sending…", and is kept (hidden, with its drafts) until the server says: taken, the line gets its
 * summary; refused, the card comes back with the reason. Its tall card never shrinks later, under
 * the pointer of a person already at the next card (issue 22, Esc on a freshly shown card).
 */

export type Finished = {
  id: string;
  kind: AskKind;
  question: string;
  summary: string;
  status: AskStatus;
  at: number;
};

export type WidgetState = {
  pending: Ask[];
  /** Pending asks whose answer is on its way: their cards are hidden, their line is in `history`. */
  sending: readonly string[];
  history: Finished[];
  moved: boolean;
  /** A newer reply's widget is the chat's live one now; this one keeps only its summaries. */
  superseded: boolean;
  announcement: string;
};

export type WidgetAction =
  | { type: "show"; ask: Ask }
  | { type: "close"; close: AskClose; at: number }
  /** The person answered a card here: its answer is on its way. */
  | { type: "sending"; askId: string; at: number }
  /** The server took the answer (the ack, before its ask:close, which follows the store's write). */
  | { type: "answered"; askId: string; status: AskStatus; at: number }
  /** The server refused the answer, or it did not get there: the card is back. */
  | { type: "unsent"; askId: string }
  /** After a reconnect and chat:view: only the asks the server showed again are still pending. */
  | { type: "keep-only"; ids: ReadonlySet<string> }
  /** The asks that finished in this reply before this page loaded (the server's record). */
  | { type: "summaries"; finished: Finished[] }
  | { type: "superseded" };

export const SENDING = "Sending…";

export const INITIAL_WIDGET: WidgetState = {
  pending: [],
  sending: [],
  history: [],
  moved: false,
  superseded: false,
  announcement: "",
};

const ARRIVAL: Record<AskKind, string> = {
  question: "New question from the agent",
  secret: "The agent requests a secret",
  approval: "The agent needs an approval",
};

export function widgetReducer(state: WidgetState, action: WidgetAction): WidgetState {
  switch (action.type) {
    case "show": {
      const known = state.pending.some((ask) => ask.id === action.ask.id);
      return {
        ...state,
        moved: false,
        pending: known
          ? state.pending.map((ask) => (ask.id === action.ask.id ? action.ask : ask))
          : [...state.pending, action.ask],
        announcement: known
          ? state.announcement
          : `${ARRIVAL[action.ask.kind]}: ${askTitle(action.ask)}`,
      };
    }
    case "close": {
      const { askId, reason, summary } = action.close;
      const ask = state.pending.find((item) => item.id === askId);
      const rest = {
        ...state,
        pending: state.pending.filter((item) => item.id !== askId),
        sending: without(state.sending, askId),
      };
      if (reason === "handed-off")
        return {
          ...rest,
          history: withoutLine(state, askId),
          moved: ask !== undefined || state.moved,
          announcement: "This question is now open in a newer tab.",
        };
      if (!ask) {
        // Answered here: the server's summary replaces the one its line got from the ack.
        if (summary === undefined || !state.history.some((item) => item.id === askId)) return state;
        return {
          ...state,
          history: state.history.map((item) => (item.id === askId ? { ...item, summary } : item)),
        };
      }
      const outcome = CLOSE_OUTCOMES[reason];
      return {
        ...rest,
        history: putLine(
          state.history,
          lineOf(ask, summary ?? outcome.summary, outcome.status, action.at),
        ),
      };
    }
    case "sending": {
      const ask = state.pending.find((item) => item.id === action.askId);
      if (!ask || state.sending.includes(ask.id)) return state;
      return {
        ...state,
        sending: [...state.sending, ask.id],
        history: putLine(state.history, lineOf(ask, SENDING, "pending", action.at)),
      };
    }
    case "answered": {
      const ask = state.pending.find((item) => item.id === action.askId);
      if (!ask) return { ...state, sending: without(state.sending, action.askId) };
      const outcome = CLOSE_OUTCOMES[action.status === "cancelled" ? "cancelled" : "answered"];
      const line = lineOf(ask, outcome.summary, action.status, action.at);
      return {
        ...state,
        pending: state.pending.filter((item) => item.id !== ask.id),
        sending: without(state.sending, ask.id),
        history: putLine(state.history, line),
      };
    }
    case "unsent":
      if (!state.sending.includes(action.askId)) return state;
      return {
        ...state,
        sending: without(state.sending, action.askId),
        history: withoutLine(state, action.askId),
      };
    case "keep-only": {
      const kept = state.pending.filter((ask) => action.ids.has(ask.id));
      const gone = state.sending.filter((id) => !action.ids.has(id));
      return {
        ...state,
        pending: kept,
        sending: state.sending.filter((id) => action.ids.has(id)),
        history: state.history.filter((item) => !gone.includes(item.id)),
      };
    }
    case "summaries": {
      const known = new Set(state.history.map((item) => item.id));
      return {
        ...state,
        history: [...action.finished.filter((item) => !known.has(item.id)), ...state.history],
      };
    }
    case "superseded":
      return {
        ...state,
        pending: [],
        sending: [],
        history: state.history.filter((item) => !state.sending.includes(item.id)),
        moved: false,
        superseded: true,
        announcement: "",
      };
  }
}

/** A finished ask of the server's record, as its line. */
export function finishedOf(ask: Ask): Finished {
  return lineOf(
    ask,
    ask.resolution?.summary ?? "",
    ask.status,
    ask.resolution?.at ?? ask.createdAt,
  );
}

/** The ask's line in the record, with its summary, status and time. */
function lineOf(ask: Ask, summary: string, status: AskStatus, at: number): Finished {
  return { id: ask.id, kind: ask.kind, question: askQuestionText(ask), summary, status, at };
}

function without(ids: readonly string[], id: string): readonly string[] {
  return ids.includes(id) ? ids.filter((item) => item !== id) : ids;
}

/** The line of the ask, in place of the one it had (the "Sending…" line keeps its place). */
function putLine(history: Finished[], line: Finished): Finished[] {
  return history.some((item) => item.id === line.id)
    ? history.map((item) => (item.id === line.id ? line : item))
    : [...history, line];
}

/** Without the "Sending…" line of an ask whose answer is not on its way any more. */
function withoutLine(state: WidgetState, askId: string): Finished[] {
  return state.sending.includes(askId)
    ? state.history.filter((item) => item.id !== askId)
    : state.history;
}
