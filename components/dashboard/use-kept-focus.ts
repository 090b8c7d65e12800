import { type FocusEvent, type RefObject, useMemo, useRef } from "react";

/**
 * Keeps the inbox usable while asks come and go around the row the owner is on:
 * - a new ask that sorts above the focused row does not scroll that row away: its position on screen
 *   is measured before each change and restored right after (the list opts out of the browser's own
 *   scroll anchoring so the two never add up);
 * - when the focused row disappears (answered here or elsewhere, expired), the focus moves to the row
 *   that followed it, else the one before it, else the empty list's message; it never jumps when the
 *   focus was elsewhere.
 */

export type KeptFocus = {
  /** Before a change of the list: remembers where the focused row is on screen. */
  measure: () => void;
  /** In a layout effect after the list changed: puts the focused row back, or moves the focus on. */
  restore(ids: readonly string[]): void;
  onFocus: (event: FocusEvent<HTMLElement>) => void;
  focusRow(id: string): void;
  emptyRef: RefObject<HTMLParagraphElement | null>;
};

const rowSelector = (id: string) => `[data-inbox-row="${CSS.escape(id)}"]`;

export function useKeptFocus(): KeptFocus {
  const emptyRef = useRef<HTMLParagraphElement>(null);
  const focused = useRef<string | null>(null);
  const anchor = useRef<{ id: string; top: number } | null>(null);
  const previous = useRef<readonly string[]>([]);

  return useMemo<KeptFocus>(() => {
    const rowOf = (id: string) => document.querySelector<HTMLElement>(rowSelector(id));
    const focusRow = (id: string) =>
      rowOf(id)?.querySelector<HTMLElement>("[data-row-toggle]")?.focus();
    return {
      emptyRef,
      focusRow,
      onFocus(event) {
        focused.current =
          event.target.closest<HTMLElement>("[data-inbox-row]")?.dataset.inboxRow ?? null;
      },
      measure() {
        // The document says which row holds the focus now: a focus event can go unheard (React
        // restores the focus of a row it moved with its events off; focusing the focused is silent).
        const holder = document.activeElement?.closest<HTMLElement>("[data-inbox-row]");
        if (holder?.dataset.inboxRow) focused.current = holder.dataset.inboxRow;
        const id = focused.current;
        const row = id ? rowOf(id) : null;
        if (id && row && row.contains(document.activeElement))
          anchor.current = { id, top: row.getBoundingClientRect().top };
      },
      restore(ids) {
        const before = previous.current;
        previous.current = ids;
        const held = anchor.current;
        anchor.current = null;
        const id = focused.current;
        if (id === null) return;
        if (ids.includes(id)) {
          const row = rowOf(id);
          if (held?.id === id && row) {
            const moved = row.getBoundingClientRect().top - held.top;
            if (moved !== 0) window.scrollBy(0, moved);
          }
          return;
        }
        // The focused row is gone. Only take the focus back when it went with the row.
        focused.current = null;
        if (document.activeElement && document.activeElement !== document.body) return;
        const at = before.indexOf(id);
        const next =
          before.slice(at + 1).find((other) => ids.includes(other)) ??
          before
            .slice(0, Math.max(at, 0))
            .reverse()
            .find((other) => ids.includes(other));
        if (next) focusRow(next);
        else emptyRef.current?.focus();
      },
    };
  }, []);
}
