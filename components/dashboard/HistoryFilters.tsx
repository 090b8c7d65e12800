import { useId } from "react";
import type { AskKind } from "../../lib/ask.ts";
import { KIND_LABELS, cx } from "../asks/format.ts";
import { muted, textInput } from "../asks/styles.ts";
import { NO_CHAT, OUTCOME_LABELS, type HistoryFilter, type Outcome } from "./inbox-model.ts";

const OUTCOMES = Object.keys(OUTCOME_LABELS) as Outcome[];
const KINDS: AskKind[] = ["question", "secret", "approval"];

const select = cx(textInput, "min-h-11");

/** The history's filters: kind, outcome, chat, and a search over questions and titles. */
export function HistoryFilters({
  filter,
  chats,
  onChange,
  shown,
  total,
}: {
  filter: HistoryFilter;
  chats: string[];
  onChange(filter: HistoryFilter): void;
  shown: number;
  total: number;
}) {
  const id = useId();
  const set = (change: Partial<HistoryFilter>) => onChange({ ...filter, ...change });
  return (
    <form role="search" aria-label="Filter the history" className="mb-3 grid gap-2 sm:grid-cols-[2fr_1fr_1fr_1fr]" onSubmit={(event) => event.preventDefault()}>
      <div>
        <label htmlFor={`${id}-text`} className={cx("mb-0.5 block text-xs font-medium", muted)}>
          Search questions and titles
        </label>
        <input id={`${id}-text`} type="search" value={filter.text} onChange={(event) => set({ text: event.target.value })} className={cx(textInput, "min-h-11")} />
      </div>
      <div>
        <label htmlFor={`${id}-kind`} className={cx("mb-0.5 block text-xs font-medium", muted)}>
          Kind
        </label>
        <select id={`${id}-kind`} value={filter.kind} onChange={(event) => set({ kind: event.target.value as HistoryFilter["kind"] })} className={select}>
          <option value="all">All kinds</option>
          {KINDS.map((kind) => (
            <option key={kind} value={kind}>
              {KIND_LABELS[kind]}
            </option>
          ))}
        </select>
      </div>
      <div>
        <label htmlFor={`${id}-outcome`} className={cx("mb-0.5 block text-xs font-medium", muted)}>
          Outcome
        </label>
        <select id={`${id}-outcome`} value={filter.outcome} onChange={(event) => set({ outcome: event.target.value as HistoryFilter["outcome"] })} className={select}>
          <option value="all">All outcomes</option>
          {OUTCOMES.map((outcome) => (
            <option key={outcome} value={outcome}>
              {OUTCOME_LABELS[outcome]}
            </option>
          ))}
        </select>
      </div>
      <div>
        <label htmlFor={`${id}-chat`} className={cx("mb-0.5 block text-xs font-medium", muted)}>
          Chat
        </label>
        <select id={`${id}-chat`} value={filter.chat} onChange={(event) => set({ chat: event.target.value })} className={select}>
          <option value="all">All chats</option>
          {chats.map((chat) => (
            <option key={chat} value={chat}>
              {chat === NO_CHAT ? "No chat (dashboard only)" : chat}
            </option>
          ))}
        </select>
      </div>
      <p role="status" className={cx("text-xs sm:col-span-4", muted)}>
        {shown === total ? `${total} finished` : `${shown} of ${total} finished`}
      </p>
    </form>
  );
}
