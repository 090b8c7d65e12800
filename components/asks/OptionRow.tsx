import type { AskOption } from "../../lib/ask.ts";
import { cx } from "./format.ts";
import { quietText } from "./styles.ts";

type Props = {
  /** Unique per question: the ids of the label, tag and description hang off it. */
  baseId: string;
  index: number;
  option: AskOption;
  /**
   * `radio` / `checkbox`: a picked-by-clicking choice (ask_user); `toggle`: a pressed button that adds
   * or removes the option's number in a typed multi-select answer (text prompts, docs/ARCHITECTURE.md#text-prompts).
   */
  control: "radio" | "checkbox" | "toggle";
  /** The radio group's name (radio and checkbox only). */
  name?: string;
  picked: boolean;
  recommended: boolean;
  busy: boolean;
  onPick: () => void;
};

// Open WebUI's option rows (AskUserCard.svelte): a line of small text, the description beside the
// label, "Recommended" at the end; the picked one is darker (and here tinted, to be seen at a glance).
// Touch-sized on the dashboard; Open WebUI's height in the widget.
const rowBase =
  "flex min-h-11 items-baseline gap-2 rounded-lg px-1.5 py-1.5 text-xs transition-colors widget:min-h-0";
const rowState = (picked: boolean) =>
  picked
    ? "bg-neutral-200/80 text-neutral-950 dark:bg-white/[0.08] dark:text-white"
    : "text-neutral-700 hover:bg-neutral-200/40 hover:text-neutral-950 dark:text-neutral-300 dark:hover:bg-white/[0.04] dark:hover:text-white";

const recommendedPill =
  "shrink-0 rounded-full bg-neutral-200/80 px-1.5 py-0.5 text-[0.625rem] text-neutral-700 dark:bg-white/[0.08] dark:text-neutral-300";

/**
 * One option of a question, whatever the control: its accessible name begins with the option's label
 * (then "Recommended" when it is), and its description describes it (docs/ARCHITECTURE.md#user-interface).
 */
export function OptionRow({
  baseId,
  index,
  option,
  control,
  name,
  picked,
  recommended,
  busy,
  onPick,
}: Props) {
  const labelId = `${baseId}-opt-${index}`;
  const tagId = `${baseId}-tag-${index}`;
  const descriptionId = `${baseId}-desc-${index}`;
  const a11y = {
    "data-option": index,
    "aria-labelledby": recommended ? `${labelId} ${tagId}` : labelId,
    "aria-describedby": option.description ? descriptionId : undefined,
  };
  const text = (
    <span className="flex min-w-0 flex-1 flex-wrap items-baseline gap-x-2">
      <span id={labelId} className="break-words" dir="auto">
        {option.label}
      </span>
      {option.description && (
        <span id={descriptionId} className={cx("min-w-0 break-words", quietText)} dir="auto">
          {option.description}
        </span>
      )}
    </span>
  );
  const tag = recommended && (
    <span id={tagId} className={recommendedPill}>
      Recommended
    </span>
  );

  if (control === "toggle") {
    return (
      <button
        type="button"
        aria-pressed={picked}
        disabled={busy}
        onClick={onPick}
        className={cx(rowBase, rowState(picked), "w-full text-start")}
        {...a11y}
      >
        {/* The number is what a typed answer uses for this option. */}
        <span aria-hidden="true" className="w-4 shrink-0 font-medium tabular-nums">
          {index + 1}.
        </span>
        {text}
        {tag}
        <span aria-hidden="true" className="w-3 shrink-0">
          {picked ? "✓" : ""}
        </span>
      </button>
    );
  }
  return (
    <label className={cx(rowBase, rowState(picked), "cursor-pointer")}>
      <input
        type={control}
        name={name}
        value={option.label}
        checked={picked}
        onChange={onPick}
        className="size-3.5 shrink-0 translate-y-0.5 self-start accent-neutral-800 dark:accent-neutral-200"
        {...a11y}
      />
      {text}
      {tag}
    </label>
  );
}
