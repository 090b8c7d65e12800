import type { AskOption } from "../../lib/ask.ts";
import { cx } from "./format.ts";
import { muted, recommendedTag } from "./styles.ts";

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

const rowBase = "flex items-start gap-3 rounded-xl border px-3 py-2.5 transition-colors";
const rowState = (picked: boolean) =>
  picked
    ? "border-sky-600 bg-sky-50 dark:border-sky-400 dark:bg-sky-950/50"
    : "border-zinc-200 hover:bg-zinc-50 dark:border-zinc-700 dark:hover:bg-zinc-800/60";

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
    <span className="min-w-0 flex-1">
      <span className="flex flex-wrap items-center gap-x-2 gap-y-1">
        <span id={labelId} className="font-medium break-words" dir="auto">
          {option.label}
        </span>
        {recommended && (
          <span id={tagId} className={recommendedTag}>
            Recommended
          </span>
        )}
      </span>
      {option.description && (
        <span
          id={descriptionId}
          className={cx("mt-0.5 block text-sm break-words", muted)}
          dir="auto"
        >
          {option.description}
        </span>
      )}
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
        <span aria-hidden="true" className="w-5 shrink-0 font-semibold tabular-nums">
          {index + 1}.
        </span>
        {text}
        <span aria-hidden="true" className="shrink-0 text-sky-700 dark:text-sky-300">
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
        className="mt-0.5 size-4 shrink-0 accent-sky-700 dark:accent-sky-400"
        {...a11y}
      />
      {text}
      {index < 9 && (
        <kbd
          aria-hidden="true"
          className={cx("hidden shrink-0 font-sans text-xs tabular-nums sm:inline", muted)}
        >
          {index + 1}
        </kbd>
      )}
    </label>
  );
}
