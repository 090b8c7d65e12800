import type { Ask, AskStatus } from "../../lib/ask.ts";
import { askTitle, KIND_LABELS, STATUS_LABELS } from "../../lib/wording.ts";
import { cx, formatTime } from "../asks/format.ts";
import { muted } from "../asks/styles.ts";

const STATUS_TONE: Record<AskStatus, string> = {
  pending: "bg-zinc-100 text-zinc-800 dark:bg-zinc-800 dark:text-zinc-200",
  answered: "bg-emerald-100 text-emerald-900 dark:bg-emerald-900/60 dark:text-emerald-100",
  cancelled: "bg-zinc-200 text-zinc-800 dark:bg-zinc-800 dark:text-zinc-200",
  expired: "bg-amber-100 text-amber-900 dark:bg-amber-900/60 dark:text-amber-100",
  denied: "bg-rose-100 text-rose-900 dark:bg-rose-900/60 dark:text-rose-100",
  "ended-as-text": "bg-zinc-200 text-zinc-800 dark:bg-zinc-800 dark:text-zinc-200",
};

/**
 * Finished asks: what, where, the outcome (the resolution's summary: never a secret), who ended it,
 * when, and from which tab.
 */
export function HistoryTable({
  asks,
  chatTitles,
  filtered,
}: {
  asks: Ask[];
  chatTitles: ReadonlyMap<string, string>;
  filtered: boolean;
}) {
  if (asks.length === 0) {
    return (
      <p
        className={cx(
          "rounded-xl border border-dashed border-zinc-300 px-4 py-8 text-center text-sm dark:border-zinc-700",
          muted,
        )}
      >
        {filtered ? "Nothing finished matches these filters" : "Nothing finished yet"}
      </p>
    );
  }
  // On a phone each row is a block of its cells (no sideways scrolling); a wider screen gets the table.
  return (
    <div className="rounded-xl border border-zinc-200 bg-white dark:border-zinc-800 dark:bg-zinc-900">
      <table className="w-full text-start text-sm max-sm:block">
        <caption className="sr-only">Finished asks, newest first</caption>
        <thead
          className={cx(
            "border-b border-zinc-200 text-xs max-sm:sr-only dark:border-zinc-800",
            muted,
          )}
        >
          <tr>
            <th scope="col" className="px-3 py-2 text-start font-medium">
              Ask
            </th>
            <th scope="col" className="px-3 py-2 text-start font-medium">
              Chat
            </th>
            <th scope="col" className="px-3 py-2 text-start font-medium">
              Outcome
            </th>
            <th scope="col" className="px-3 py-2 text-start font-medium">
              By
            </th>
            <th scope="col" className="px-3 py-2 text-start font-medium">
              When
            </th>
          </tr>
        </thead>
        <tbody className="max-sm:block">
          {asks.map((ask) => {
            const resolution = ask.resolution;
            const by =
              resolution?.by ??
              (ask.status === "answered"
                ? "elsewhere"
                : ask.status === "expired"
                  ? "timeout"
                  : "—");
            return (
              <tr
                key={ask.id}
                className="border-b border-zinc-100 align-top last:border-0 max-sm:block max-sm:py-1 dark:border-zinc-800/70"
              >
                <td className="px-3 py-2 max-sm:block max-sm:py-1">
                  <span className={cx("block text-xs", muted)}>{KIND_LABELS[ask.kind]}</span>
                  <span className="font-medium break-words" dir="auto">
                    {askTitle(ask)}
                  </span>
                </td>
                <td
                  className={cx(
                    "px-3 py-2 text-xs break-all max-sm:block max-sm:py-0.5",
                    !(ask.chatId && chatTitles.get(ask.chatId)) && "font-mono",
                  )}
                >
                  <span className={cx("font-sans sm:sr-only", muted)}>Chat </span>
                  {ask.chatId === null ? (
                    "—"
                  ) : (
                    <span dir="auto">{chatTitles.get(ask.chatId) ?? ask.chatId}</span>
                  )}
                </td>
                <td className="px-3 py-2 max-sm:block max-sm:py-1">
                  <span
                    className={cx(
                      "inline-block rounded-full px-2 py-0.5 text-xs font-medium",
                      STATUS_TONE[ask.status],
                    )}
                  >
                    {STATUS_LABELS[ask.status]}
                  </span>
                  {resolution?.summary && (
                    <span className="mt-0.5 block break-words whitespace-pre-line" dir="auto">
                      {resolution.summary}
                    </span>
                  )}
                </td>
                <td className="px-3 py-2 max-sm:inline-block max-sm:py-0.5">
                  <span className="font-medium">{by}</span>
                  {resolution?.tabId && (
                    <span className={cx("block text-xs max-sm:inline", muted)}>
                      {" "}
                      from tab {resolution.tabId.slice(0, 6)}
                    </span>
                  )}
                </td>
                <td
                  className={cx(
                    "px-3 py-2 text-xs whitespace-nowrap max-sm:inline-block max-sm:py-0.5",
                    muted,
                  )}
                >
                  {formatTime(resolution?.at ?? ask.createdAt)}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
