import { useEffect, useLayoutEffect, useRef, type RefObject } from "react";
import type { NumberPick } from "./types.ts";

/** A card takes each pick of its row once: the focus, then the number, as if the key had been pressed on it. */
export function useNumberPick(pick: NumberPick | undefined, root: RefObject<HTMLElement | null>, press: (digit: number) => void): void {
  const latest = useRef(press);
  useLayoutEffect(() => {
    latest.current = press;
  });
  useEffect(() => {
    if (!pick) return;
    pick.taken();
    root.current?.focus();
    latest.current(pick.digit);
  }, [pick, root]);
}
