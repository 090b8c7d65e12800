import { useId } from "react";
import type { AskKind } from "../../lib/ask.ts";
import { KIND_LABELS } from "../../lib/wording.ts";
import { cx } from "../asks/format.ts";
import { muted, textInput } from "../asks/styles.ts";
import { type HistoryFilter, NO_CHAT, type Outcome, OUTCOME_LABELS } from "./inbox-model.ts";

const OUTCOMES = Object.keys(OUTCOME_LABELS) as Outcome[];
const KINDS: AskKind[] = ["question", "secret", "approval"];

const select = cx(textInput, "min-h-11");

const kindLabel = (kind: AskKind) => KIND_LABELS[kind];
const outcomeLabel = (outcome: Outcome) => OUTCOME_LABELS[outcome];
const chatLabel = (chat: string) => (chat === NO_CHAT ? "No chat (dashboard only)" : chat);

/** One labelled filter: "all" first, then each of `values` as `labelOf` names it. */
function FilterSelect<T extends string>({
  id,
  label,
  allLabel,
  value,
  values,
  labelOf,
  onChange,
}: {
  id: string;
  label: string;
  allLabel: string;
  value: T | "all";
  values: readonly T[];
  labelOf: (value: T) => string;
  onChange: (value: T | "all") => void;
}) {
  return (
    <div>
      <label htmlFor={id} className={cx("mb-0.5 block text-xs font-medium", muted)}>
        {label}
      </label>
      <select
        id={id}
        value={value}
        onChange={(event) => onChange(event.target.value as T | "all")}
        className={select}
      >
        <option value="all">{allLabel}</option>
        {values.map((option) => (
          <option key={option} value={option}>
            {labelOf(option)}
          </option>
        ))}
      </select>
    </div>
  );
}

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
  onChange: (filter: HistoryFilter) => void;
  shown: number;
  total: number;
}) {
  const id = useId();
  const set = (change: Partial<HistoryFilter>) => onChange({ ...filter, ...change });
  return (
    <form
      role="search"
      aria-label="Filter the history"
      className="mb-3 grid gap-2 sm:grid-cols-[2fr_1fr_1fr_1fr]"
      onSubmit={(event) => event.preventDefault()}
    >
      <div>
        <label htmlFor={`${id}-text`} className={cx("mb-0.5 block text-xs font-medium", muted)}>
          Search questions and titles
        </label>
        <input
          id={`${id}-text`}
          type="search"
          value={filter.text}
          onChange={(event) => set({ text: event.target.value })}
          className={cx(textInput, "min-h-11")}
        />
      </div>
      <FilterSelect
        id={`${id}-kind`}
        label="Kind"
        allLabel="All kinds"
        value={filter.kind}
        values={KINDS}
        labelOf={kindLabel}
        onChange={(kind) => set({ kind })}
      />
      <FilterSelect
        id={`${id}-outcome`}
        label="Outcome"
        allLabel="All outcomes"
        value={filter.outcome}
        values={OUTCOMES}
        labelOf={outcomeLabel}
        onChange={(outcome) => set({ outcome })}
      />
      <FilterSelect
        id={`${id}-chat`}
        label="Chat"
        allLabel="All chats"
        value={filter.chat}
        values={chats}
        labelOf={chatLabel}
        onChange={(chat) => set({ chat })}
      />
      <p role="status" className={cx("text-xs sm:col-span-4", muted)}>
        {shown === total ? `${total} finished` : `${shown} of ${total} finished`}
      </p>
    </form>
  );
}
