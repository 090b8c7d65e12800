import { useEffect, useId, useRef } from "react";
import { cx } from "../asks/format.ts";
import { card, secondaryButton } from "../asks/styles.ts";

const KEYS: [keys: string[], what: string][] = [
  [["j"], "next row"],
  [["k"], "previous row"],
  [["Enter"], "open or close the row's card"],
  [["d"], "deny the approval, or cancel the question or secret"],
  [["a"], "allow an approval once (never Always allow)"],
  [["1", "9"], "pick an option of the row's card (Enter then submits or decides)"],
  [["Esc"], "inside a card: cancel it (an approval is denied)"],
  [["?"], "this help"],
];

/** The keyboard triage overlay (`?`): a modal dialog, closed by Esc or its button. */
export function KeyboardHelp({ open, onClose }: { open: boolean; onClose: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();

  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) dialog.showModal();
    if (!open && dialog.open) dialog.close();
  }, [open]);

  return (
    <dialog
      ref={ref}
      aria-labelledby={titleId}
      onClose={onClose}
      className={cx(
        card,
        "m-auto w-[min(28rem,calc(100vw-1.5rem))] text-zinc-900 backdrop:bg-zinc-950/60 dark:text-zinc-100",
      )}
    >
      <h2 id={titleId} className="text-base font-semibold">
        Keyboard shortcuts
      </h2>
      <dl className="mt-3 grid grid-cols-[auto_1fr] gap-x-4 gap-y-2 text-sm">
        {KEYS.map(([keys, what]) => (
          <div key={what} className="contents">
            <dt className="whitespace-nowrap">
              {keys.map((key, i) => (
                <span key={key}>
                  {i > 0 && " – "}
                  <kbd className="rounded border border-zinc-300 bg-zinc-100 px-1.5 py-0.5 font-mono text-xs dark:border-zinc-600 dark:bg-zinc-800">
                    {key}
                  </kbd>
                </span>
              ))}
            </dt>
            <dd>{what}</dd>
          </div>
        ))}
      </dl>
      <div className="mt-4 flex justify-end">
        <button type="button" className={secondaryButton} onClick={onClose} autoFocus>
          Close
        </button>
      </div>
    </dialog>
  );
}
