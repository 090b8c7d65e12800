import type { Ask } from "../../lib/ask.ts";
import { originText } from "../../lib/wording.ts";
import { cx } from "./format.ts";
import { muted } from "./styles.ts";

/** Whose run asked (docs/SECURITY.md#whose-run-asks), under a card's heading; nothing for rows that do not say. */
export function AskOrigin({ ask, className }: { ask: Pick<Ask, "origin">; className?: string }) {
  const text = originText(ask.origin);
  if (text === null) return null;
  return (
    <p data-ask-origin className={cx("mt-1 text-xs break-words", muted, className)} dir="auto">
      {text}
    </p>
  );
}
