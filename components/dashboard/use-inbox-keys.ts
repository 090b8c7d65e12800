import { useEffect } from "react";
import { useLatest } from "../common/use-latest.ts";

/**
 * Keyboard triage of the inbox (the `?` overlay lists it): `j`/`k` move between rows, `Enter` opens one
 * (the row's toggle is a button), `d` denies or cancels, `a` allows once, number keys pick an option.
 * Keys typed into a field, inside a dialog or while a modal is open, or already taken by a card (its own
 * number keys, Esc) are left alone; so are keys with Ctrl, Alt or Meta.
 */

export type InboxKeyActions = {
  help(): void;
  /** `row` is the ask whose row holds the focus, or null when the focus is outside the list. */
  move(row: string | null, step: 1 | -1): void;
  deny(row: string): void;
  allow(row: string): void;
  pick(row: string, digit: string): void;
};

function isTyping(target: HTMLElement): boolean {
  if (
    target.isContentEditable ||
    target instanceof HTMLTextAreaElement ||
    target instanceof HTMLSelectElement
  )
    return true;
  return (
    target instanceof HTMLInputElement &&
    !["checkbox", "radio", "button", "submit", "reset"].includes(target.type)
  );
}

export function useInboxKeys(enabled: boolean, actions: InboxKeyActions): void {
  const latest = useLatest({ enabled, actions });

  useEffect(() => {
    const onKeyDown = (event: KeyboardEvent) => {
      if (
        !latest.current.enabled ||
        event.defaultPrevented ||
        event.altKey ||
        event.ctrlKey ||
        event.metaKey
      )
        return;
      const target = event.target instanceof HTMLElement ? event.target : document.body;
      // An open modal has the keys. Asked of the page rather than of React's state: on Esc the browser
      // closes a <dialog> at once, but its close event (React's state) and the focus leaving it come a
      // task later, and a key pressed in between, from inside the closed dialog, is not lost.
      if (isTyping(target) || document.querySelector("dialog[open], [aria-modal='true']")) return;
      const row = target.closest<HTMLElement>("[data-inbox-row]")?.dataset.inboxRow ?? null;
      const act = latest.current.actions;
      if (event.key === "?") act.help();
      else if (event.key === "j") act.move(row, 1);
      else if (event.key === "k") act.move(row, -1);
      else if (event.key === "d" && row) act.deny(row);
      else if (event.key === "a" && row) act.allow(row);
      else if (/^[1-9]$/.test(event.key) && row && !target.closest("[data-row-panel]"))
        act.pick(row, event.key);
      else return;
      event.preventDefault();
    };
    document.addEventListener("keydown", onKeyDown);
    return () => document.removeEventListener("keydown", onKeyDown);
  }, [latest]);
}
